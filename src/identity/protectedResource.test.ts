import { describe, expect, it } from 'vitest';
import { groupsOf } from './accessTokens.js';
import { bearerChallenge, protectedResourcePaths } from './protectedResource.js';

describe('protected resource', () => {
  it('publishes its metadata with the resource path inserted (RFC 9728) and at the bare well-known path', () => {
    const paths = protectedResourcePaths('https://loadout.example.com/mcp/');
    expect(paths.named).toBe('/.well-known/oauth-protected-resource/mcp');
    expect([...paths.all]).toEqual(['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']);
  });

  it('challenges with the metadata URL, and names the error and the needed scope of a refused token', () => {
    const url = 'https://l.example/.well-known/oauth-protected-resource/mcp';
    expect(bearerChallenge(url)).toBe(`Bearer resource_metadata="${url}"`);
    expect(bearerChallenge(url, { ok: false, status: 403, error: 'insufficient_scope', description: 'lacks "a"', scope: 'a b' })).toBe(
      `Bearer resource_metadata="${url}", error="insufficient_scope", error_description="lacks 'a'", scope="a b"`,
    );
  });

  it('reads groups from an array, a space-separated string, or a dotted path into objects', () => {
    expect(groupsOf({ groups: ['a', 'b', 3] }, 'groups')).toEqual(['a', 'b']);
    expect(groupsOf({ roles: 'x y' }, 'roles')).toEqual(['x', 'y']);
    expect(groupsOf({ realm_access: { roles: ['admin'] } }, 'realm_access.roles')).toEqual(['admin']);
    expect(groupsOf({ 'https://example.com/groups': ['g'] }, 'https://example.com/groups')).toEqual(['g']);
    expect(groupsOf({}, 'groups')).toEqual([]);
  });
});
