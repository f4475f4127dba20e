import { describe, expect, it } from 'vitest';
import { PolicySettingsSchema } from '../config/index.js';
import { Policy } from './policy.js';
import { issuedPrincipal, LOCAL_PRINCIPAL, staticTokenPrincipal } from './principal.js';

const policyOf = (settings: unknown): Policy => new Policy(PolicySettingsSchema.parse(settings));

describe('Policy', () => {
  it('grants everything when it has no rule', () => {
    expect(policyOf({}).grantsFor(issuedPrincipal('https://idp', 'alice', []))).toBeUndefined();
  });

  it('grants servers, single tools, prompts and resources to groups, subjects and everyone, and nothing else', () => {
    const policy = policyOf({
      local: { subject: 'me', groups: ['ops'] },
      rules: [
        { groups: ['eng'], servers: ['github'], tools: ['db.query'] },
        { subjects: ['bob'], prompts: ['db.explain'], resources: ['db'] },
        { everyone: true, servers: ['time'] },
        { groups: ['ops'], servers: ['kube'] },
      ],
    });
    const alice = policy.grantsFor(issuedPrincipal('https://idp', 'alice', ['eng']))!;
    expect([alice.tool('github', 'any'), alice.tool('db', 'query'), alice.tool('db', 'drop'), alice.tool('time', 'now')]).toEqual([
      true,
      true,
      false,
      true,
    ]);
    expect([alice.server('db'), alice.wholeServer('db'), alice.server('kube'), alice.prompt('db', 'explain')]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    const bob = policy.grantsFor(issuedPrincipal('https://idp', 'bob', []))!;
    expect([bob.prompt('db', 'explain'), bob.resources('db'), bob.tool('db', 'query'), bob.tool('github', 'x')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    // The local caller is policy.local; a static token has no groups.
    expect(policy.grantsFor(LOCAL_PRINCIPAL)!.server('kube')).toBe(true);
    expect(policy.grantsFor(staticTokenPrincipal('secret'))!.server('kube')).toBe(false);
    expect(policy.grantsFor(staticTokenPrincipal('secret'))!.server('time')).toBe(true);
  });

  it('grants saved toolsets by name to the callers a rule names, and refuses a name no toolset could have', () => {
    const policy = policyOf({
      rules: [
        { groups: ['eng'], toolsets: ['review'] },
        { everyone: true, servers: ['time'] },
      ],
    });
    const alice = policy.grantsFor(issuedPrincipal('https://idp', 'alice', ['eng']))!;
    const bob = policy.grantsFor(issuedPrincipal('https://idp', 'bob', []))!;
    expect([alice.toolset('review'), alice.toolset('other'), bob.toolset('review')]).toEqual([true, false, false]);
    // A toolset granted is not its tools: those are granted (or not) by the rest of the policy.
    expect(alice.server('github')).toBe(false);
    expect(PolicySettingsSchema.safeParse({ rules: [{ everyone: true, toolsets: ['../x'] }] }).success).toBe(false);
  });

  it('refuses a rule that grants to no one, and a tool not named server.tool', () => {
    expect(PolicySettingsSchema.safeParse({ rules: [{ servers: ['a'] }] }).error?.message).toContain('a rule names whom it grants to');
    expect(PolicySettingsSchema.safeParse({ rules: [{ everyone: true, tools: ['nodot'] }] }).error?.message).toContain('server.name');
    expect(PolicySettingsSchema.safeParse({ rules: [{ everyone: true, tool: ['a.b'] }] }).error?.message).toContain("unknown key 'tool'");
  });
});
