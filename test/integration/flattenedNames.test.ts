// Flattened names end to end: tools of different servers that flatten alike, and names too long
// for Claude Code's 64-character limit, get distinct valid names that route to the right server.
import { describe, expect, it } from 'vitest';
import { mutableServer, runCli } from '../helpers/cli.js';
import { fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';

const LONG_PREFIX = 'summarise_the_quarterly_engineering_report_for_the_board_';

describe('flattened names through loadout serve', () => {
  const sandbox = useGatewaySandbox();

  it('equips, flattens and calls tool names with spaces and dots, from build-toolset and the CLI', async () => {
    const { dirs } = sandbox;
    await writeServersYaml(dirs.configDir, { odd: await mutableServer(dirs.root, 'odd', [{ name: 'read file' }, { name: 'v1.search' }]) });
    const gateway = await sandbox.start();
    const built = await gateway.client.callTool({
      name: 'build-toolset',
      arguments: { name: 'odd', tools: ['odd.read file', 'odd.v1.search'], equip: true },
    });
    expect(built.isError).toBeFalsy();
    const exposed = (await gateway.client.listTools()).tools.map((tool) => tool.name).filter((name) => name.startsWith('odd_'));
    expect(exposed.sort()).toEqual(['odd_read_file', 'odd_v1_search']);
    expect(textOf(await gateway.client.callTool({ name: 'odd_read_file', arguments: {} }))).toBe('read file');
    expect(textOf(await gateway.client.callTool({ name: 'odd_v1_search', arguments: {} }))).toBe('v1.search');
    expect(textOf(await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'odd.v1.search' } }))).toBe('v1.search');
    const created = await runCli(dirs, ['toolset', 'create', 'odd2', 'odd.read file', 'odd.v1.search']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect((await runCli(dirs, ['toolset', 'show', 'odd2'])).stdout).toContain('odd.read file');
  });

  it('gives a.b_env and a_b.env distinct names and routes each call to its own server', async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      a: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'b_', WHO: 'server a' } }),
      a_b: nodeServer(fixture('echo'), { env: { WHO: 'server a_b' } }),
    });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    const active = textOf(await gateway.client.callTool({ name: 'get-active-toolset', arguments: {} }));
    const nameOf = (id: string): string => new RegExp(`^${id.replace('.', '\\.')} → (\\S+): available$`, 'm').exec(active)![1]!;
    const fromA = nameOf('a.b_env');
    const fromAB = nameOf('a_b.env');
    expect(new Set([fromA, fromAB]).size).toBe(2);
    expect([fromA, fromAB]).toContain('a_b_env');
    expect(textOf(await gateway.client.callTool({ name: fromA, arguments: { name: 'WHO' } }))).toBe('server a');
    expect(textOf(await gateway.client.callTool({ name: fromAB, arguments: { name: 'WHO' } }))).toBe('server a_b');
  });

  it('cuts names longer than the budget, keeps them valid, and calls them', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { reports: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: LONG_PREFIX } }) });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    const exposed = (await gateway.client.listTools()).tools.map((tool) => tool.name).filter((name) => name.startsWith('reports_'));
    expect(exposed).toHaveLength(5);
    for (const name of exposed) {
      expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(`mcp__loadout__${name}`.length).toBeLessThanOrEqual(64);
      expect(name).toMatch(/_[0-9a-f]{6}$/);
    }
    expect(new Set(exposed).size).toBe(5);
    const active = textOf(await gateway.client.callTool({ name: 'get-active-toolset', arguments: {} }));
    const addName = new RegExp(`^reports\\.${LONG_PREFIX}add → (\\S+): available$`, 'm').exec(active)![1]!;
    expect(exposed).toContain(addName);
    expect((await gateway.client.callTool({ name: addName, arguments: { a: 1, b: 2 } })).structuredContent).toEqual({ sum: 3 });
  });

  it('follows gateway.client_key for the length budget', async () => {
    await writeServersYaml(
      sandbox.dirs.configDir,
      { reports: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: LONG_PREFIX } }) },
      { gateway: { client_key: 'tools-gateway-for-the-whole-team' } },
    );
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    const exposed = (await gateway.client.listTools()).tools.map((tool) => tool.name).filter((name) => name.startsWith('reports_'));
    for (const name of exposed) expect(`mcp__tools-gateway-for-the-whole-team__${name}`.length).toBeLessThanOrEqual(64);
  });
});
