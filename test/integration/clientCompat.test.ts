// What agent clients other than Claude Code need of the meta-tools, as `loadout serve` lists and
// answers them: honest annotations (Codex CLI refuses unannotated tools under `codex exec`), keys a
// client adds to every call ignored (Gemini CLI's `wait_for_previous`), schema patterns every
// regex engine compiles (RE2, Python), and rules said in words where a client drops `pattern`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  META_TOOL_NAMES,
  fixture,
  makeTempDirs,
  nodeServer,
  rawToolsOf,
  startGateway,
  textOf,
  writeServersYaml,
} from '../helpers/gateway.js';
import type { GatewayProcess, RawTool, TempDirs } from '../helpers/gateway.js';

// What each meta-tool may honestly claim. call-tool reaches any tool, so it claims nothing.
const EXPECTED_ANNOTATIONS: Record<string, Record<string, boolean>> = {
  'discover-all-tools': { readOnlyHint: true, openWorldHint: false },
  'list-saved-toolsets': { readOnlyHint: true, openWorldHint: false },
  'get-active-toolset': { readOnlyHint: true, openWorldHint: false },
  'build-toolset': { destructiveHint: false, openWorldHint: false },
  'equip-toolset': { destructiveHint: false, openWorldHint: false },
  'unequip-toolset': { destructiveHint: false, openWorldHint: false },
  'delete-toolset': { openWorldHint: false },
  'call-tool': { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  // A script reaches any tool, as call-tool does: clients that ask before a risky call ask before a script.
  'run-code': { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
};

/**
 * Why `pattern` is not portable, or undefined when it is: it must compile as an ECMA-262 regex with
 * the `u` flag (what JSON Schema names), and use nothing RE2 or Python's `re` reads differently or
 * refuses: `[^]` and `[]`, lookaround, backreferences, named groups, \p classes, \u and \c escapes.
 */
function unportable(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return `not a valid ECMA-262 regex: ${(error as Error).message}`;
  }
  const rules: Array<[RegExp, string]> = [
    [/(?<!\\)\[\^?\]/, 'an empty class ([] or [^]) is JavaScript-only'],
    [/\(\?<?[=!]/, 'lookaround is not in RE2'],
    [/\(\?<[A-Za-z]/, 'named groups are spelt differently in Python'],
    [/\\[1-9k]/, 'backreferences are not in RE2'],
    [/\\[pP]\{/, 'Unicode property classes are not in Python re'],
    [/\\[uc]/, '\\u and \\c escapes are not in RE2'],
  ];
  return rules.find(([rule]) => rule.test(pattern))?.[1];
}

function patternsIn(schema: unknown, at = ''): Array<[string, string]> {
  if (Array.isArray(schema)) return schema.flatMap((item, index) => patternsIn(item, `${at}[${index}]`));
  if (!schema || typeof schema !== 'object') return [];
  return Object.entries(schema).flatMap(([key, value]) =>
    key === 'pattern' && typeof value === 'string' ? [[at, value] as [string, string]] : patternsIn(value, `${at}/${key}`),
  );
}

describe('the portable-pattern check itself', () => {
  it.each([
    ['\\.[^]+$', /empty class/],
    ['(?<=a)b', /lookaround/],
    ['(a)\\1', /backreferences/],
    ['\\p{L}+', /Unicode property/],
    ['(?<name>a)', /named groups/],
    ['[', /not a valid/],
  ])('refuses %s', (pattern, why) => {
    expect(unportable(pattern)).toMatch(why);
  });
  it.each(['^[a-z0-9][a-z0-9_-]{0,63}$', '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\\.[\\s\\S]+$', '^[^.\\s]+\\.\\S+$'])('accepts %s', (pattern) => {
    expect(unportable(pattern)).toBeUndefined();
  });
});

describe('meta-tools as clients other than Claude Code meet them', () => {
  let dirs: TempDirs;
  let gateway: GatewayProcess;
  let listed: Map<string, RawTool>;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    // Every meta-tool, the optimization ones too: their schemas are written by loadout as well.
    await writeServersYaml(
      dirs.configDir,
      { echo: nodeServer(fixture('echo')), strict: nodeServer(fixture('strictArgs')) },
      { optimization: { expose_tools: true } },
    );
    gateway = await startGateway({ dirs });
    listed = new Map((await rawToolsOf(gateway.client)).map((tool) => [tool.name, tool]));
  });
  afterAll(async () => {
    await gateway?.close();
    await dirs?.cleanup();
  });

  it('annotates every meta-tool honestly', () => {
    // Exactly these: a hint left out means the spec's default (not read-only, destructive, open world).
    for (const name of META_TOOL_NAMES) expect(listed.get(name)?.annotations, name).toEqual(EXPECTED_ANNOTATIONS[name]!);
    for (const [name, tool] of listed) expect(tool.annotations, name).toBeDefined();
  });

  it('writes only portable patterns into every meta-tool schema', () => {
    const found = [...listed.values()].flatMap((tool) =>
      patternsIn(tool.inputSchema).map(([at, pattern]) => ({ tool: tool.name, at, pattern })),
    );
    expect(found.length).toBeGreaterThan(0);
    expect(found.filter(({ pattern }) => unportable(pattern) !== undefined)).toEqual([]);
  });

  it('says the toolset-name rule in words beside its pattern', () => {
    for (const name of ['build-toolset', 'equip-toolset', 'delete-toolset']) {
      const property = (listed.get(name)?.inputSchema as { properties: Record<string, { description?: string }> }).properties.name;
      expect(property?.description, name).toMatch(/a-z, 0-9, "_" and "-" \(at most 64\)/);
    }
  });

  it('ignores a key the client adds to every call (wait_for_previous), in every meta-tool', async () => {
    const call = async (name: string, args: Record<string, unknown>): Promise<string> => {
      const result = await gateway.client.callTool({ name, arguments: { ...args, wait_for_previous: true } });
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
      return textOf(result);
    };
    expect(await call('discover-all-tools', { query: 'echo' })).toContain('echo.echo');
    expect(await call('build-toolset', { name: 'strict', tools: ['strict.strict'], equip: true })).toContain("Equipped 'strict'");
    expect(await call('list-saved-toolsets', {})).toContain('* strict');
    expect(await call('get-active-toolset', {})).toContain('strict.strict → strict_strict');
    expect(await call('call-tool', { tool: 'echo.echo', arguments: { text: 'hi' } })).toBe('hi');
    expect(await call('unequip-toolset', {})).toContain("Unequipped 'strict'");
    expect(await call('equip-toolset', { name: 'strict' })).toContain("Equipped 'strict'");
    expect(await call('delete-toolset', { name: 'strict' })).toContain("Deleted toolset 'strict'");
  });

  // loadout passes a downstream tool's arguments unchanged (docs/clients.md says why): a server
  // that refuses keys it does not declare answers a client-added key itself, as it would directly.
  it('passes a client-added key on to a downstream tool unchanged, and its refusal back', async () => {
    await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'strict2', tools: ['strict.strict'], equip: true } });
    const direct = await gateway.client.callTool({ name: 'strict_strict', arguments: { text: 'hi', wait_for_previous: true } });
    expect(direct.isError).toBe(true);
    expect(textOf(direct)).toBe('unexpected arguments: wait_for_previous');
    const viaCallTool = await gateway.client.callTool({
      name: 'call-tool',
      arguments: { tool: 'strict.strict', arguments: { text: 'hi' }, wait_for_previous: true },
    });
    expect(textOf(viaCallTool)).toBe('hi');
  });
});

describe('answers to a client whose model sees `-` as `_` (Codex CLI)', () => {
  let dirs: TempDirs;
  const gateways: GatewayProcess[] = [];
  beforeAll(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
  });
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
    await dirs?.cleanup();
  });

  it('names the meta-tools as that model sees them, and leaves them as they are for other clients', async () => {
    const codex = await startGateway({ dirs, clientName: 'codex-mcp-client' });
    gateways.push(codex);
    const build = { name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } };
    expect(textOf(await codex.client.callTool(build))).toBe(
      'Saved toolset \'talk\' with 1 tool. Equip it with equip_toolset {"name": "talk"}.',
    );
    const refused = await codex.client.callTool({ name: 'equip-toolset', arguments: {} });
    expect(textOf(refused)).toMatch(/^Invalid arguments for equip_toolset: name: /);
    expect(codex.client.getInstructions()).toContain('Some clients show these names with _ for - (discover_all_tools, call_tool)');
    await codex.close();
    gateways.pop();
    const other = await startGateway({ dirs });
    gateways.push(other);
    expect(textOf(await other.client.callTool(build))).toBe(
      'Saved toolset \'talk\' with 1 tool. Equip it with equip-toolset {"name": "talk"}.',
    );
  });
});
