// Every meta-tool given malformed input: an isError result with one readable line, and the
// gateway keeps answering. One gateway serves the whole file.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  META_TOOL_NAMES,
  fixture,
  makeTempDirs,
  nodeServer,
  startGateway,
  textOf,
  writeServersYaml,
  type GatewayProcess,
  type TempDirs,
} from '../helpers/gateway.js';

const CASES: Array<[tool: string, args: Record<string, unknown>, expected: RegExp]> = [
  ['discover-all-tools', { limit: 'ten' }, /^Invalid arguments for discover-all-tools: limit: .*Example: /],
  ['discover-all-tools', { limit: 0 }, /limit: /],
  ['discover-all-tools', { offset: -1 }, /offset: /],
  ['discover-all-tools', { server: 'nope' }, /^Server 'nope' is not configured; servers: echo$/],
  ['build-toolset', {}, /^Invalid arguments for build-toolset: name: required \(string\); tools: required \(array\)\. Example: /],
  ['build-toolset', { name: 'x', tools: 'echo.echo' }, /tools: /],
  ['build-toolset', { name: 'x', tools: [] }, /list at least one tool/],
  // Unknown keys are ignored at the top level only (clientCompat.test.ts); inside a value they are refused.
  ['build-toolset', { name: 'x', tools: [{ server: 'echo', tool: 'echo', colour: 'red' }] }, /^Invalid arguments for build-toolset: tools/],
  ['build-toolset', { name: '../escape', tools: ['echo.echo'] }, /name: toolset names use a-z/],
  ['build-toolset', { name: 'all', tools: ['echo.echo'] }, /'all' is reserved/],
  [
    'build-toolset',
    { name: 'x', tools: ['echo.ech'] },
    /^Toolset 'x' not saved: 'echo.ech' is not in the catalog \(did you mean echo\.echo/,
  ],
  ['equip-toolset', {}, /^Invalid arguments for equip-toolset: name: /],
  ['equip-toolset', { name: 5 }, /name: /],
  ['equip-toolset', { name: 'nope' }, /^Toolset 'nope' not found; saved toolsets: /],
  ['equip-toolset', { name: '../../etc/passwd' }, /name: toolset names use a-z/],
  ['delete-toolset', {}, /^Invalid arguments for delete-toolset: name: /],
  ['delete-toolset', { name: [] }, /name: /],
  ['delete-toolset', { name: 'nope' }, /^Toolset 'nope' not found; saved toolsets: /],
  ['delete-toolset', { name: 'all' }, /'all' is built in/],
  ['call-tool', {}, /^Invalid arguments for call-tool: tool: /],
  ['call-tool', { tool: 7 }, /tool: /],
  ['call-tool', { tool: 'echo.ech' }, /^No tool 'echo\.ech' in the catalog\. Did you mean: .*echo\.echo/],
  ['call-tool', { tool: 'echo_ech' }, /^No tool 'echo_ech' in the catalog\. Did you mean: .*echo\.echo/],
  ['call-tool', { tool: 'echo.echo', arguments: 'text=hi' }, /arguments: /],
  ['call-tool', { tool: 'echo.pid' }, /^echo\.pid is disabled in servers\.yaml \(enabled: false\); it cannot be called\.$/],
  ['build-toolset', { name: 'x', tools: ['echo.echo', 'echo.pid'] }, /^Toolset 'x' not saved: 'echo\.pid' is disabled in servers\.yaml/],
];

describe('meta-tools given malformed input', () => {
  let dirs: TempDirs;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo'), { tools: { pid: { enabled: false } } }) });
    gateway = await startGateway({ dirs });
    const saved = await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'saved', tools: ['echo.echo'] } });
    expect(saved.isError).toBeFalsy();
  });
  afterAll(async () => {
    await gateway.close();
    await dirs.cleanup();
  });

  it.each(CASES)('%s %j → one readable isError line', async (tool, args, expected) => {
    const result = await gateway.client.callTool({ name: tool, arguments: args });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(expected);
    expect(text).not.toContain('\n');
    expect(text.length).toBeLessThan(400);
    // Still up, and nothing was equipped or written by the bad call.
    expect((await gateway.client.listTools()).tools).toHaveLength(META_TOOL_NAMES.length);
  });

  it('did not create or change any toolset file', async () => {
    expect(await readdir(path.join(dirs.configDir, 'toolsets'))).toEqual(['saved.yaml']);
    expect(await readdir(dirs.configDir)).toEqual(['servers.yaml', 'toolsets']);
  });

  it('reports an unreadable toolset file in list-saved-toolsets and equip-toolset without failing the others', async () => {
    const dir = path.join(dirs.configDir, 'toolsets');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'broken.yaml'), 'name: broken\ntools: [echo.echo\n');
    const listed = textOf(await gateway.client.callTool({ name: 'list-saved-toolsets', arguments: {} }));
    expect(listed).toContain('saved (1 tool)');
    expect(listed).toMatch(/! .*broken\.yaml/);
    const equip = await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'broken' } });
    expect(equip.isError).toBe(true);
    expect(textOf(equip)).toMatch(/broken\.yaml/);
    expect(gateway.listChangedCount()).toBe(0);
  });

  it('answers a call to a tool that does not exist at all with isError: no such tool, did you mean', async () => {
    const result = await gateway.client.callTool({ name: 'no_such_tool', arguments: {} });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^No tool 'no_such_tool' in the catalog/);
    const typo = await gateway.client.callTool({ name: 'echo.ech', arguments: {} });
    expect(textOf(typo)).toMatch(/^No tool 'echo\.ech' in the catalog\. Did you mean: .*echo\.echo/);
  });

  it('tells a real tool that is not equipped apart from a missing one, naming both fixes', async () => {
    for (const name of ['echo_add', 'echo.add']) {
      const result = await gateway.client.callTool({ name, arguments: { a: 1, b: 2 } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `Tool '${name}' exists (echo.add) but is not in the equipped toolset. Equip a toolset that contains it (build-toolset, then equip-toolset), or call it now with call-tool {"tool": "echo.add", "arguments": {…}}.`,
      );
    }
    expect(textOf(await gateway.client.callTool({ name: 'echo.pid', arguments: {} }))).toContain('disabled in servers.yaml');
  });

  it('hides a disabled tool from discover-all-tools', async () => {
    const listed = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(listed).toMatch(/^4 tools/);
    expect(listed).not.toContain('echo.pid');
  });

  it('equips a hand-written toolset with an unknown tool, exposing the rest and naming what was left out', async () => {
    await writeFile(path.join(dirs.configDir, 'toolsets', 'byhand.yaml'), 'name: byhand\ntools: [echo.echo, echo.nope, echo.pid]\n');
    const equipped = textOf(await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'byhand' } }));
    expect(equipped).toContain("Equipped 'byhand': 1 tool: echo_echo.");
    expect(equipped).toContain('Not exposed: echo.nope (not in the catalog');
    expect(equipped).toContain('Not exposed: echo.pid (disabled in servers.yaml)');
  });
});
