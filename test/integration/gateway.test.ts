// `loadout serve` end to end against the echo fixture: the idle list, equip/unequip and their
// notifications, routing, call-tool, `all`, the re-list wait, restart memory and failures.
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/client';
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOOLSET_META_TOOLS } from '../../src/gateway/index.js';
import { listMetaTools } from '../../src/gateway/session.js';
import {
  CLI,
  META_TOOL_NAMES,
  eventually,
  fixture,
  makeTempDirs,
  nodeServer,
  rawToolsOf,
  startGateway,
  textOf,
  writeServersYaml,
  type GatewayProcess,
  type TempDirs,
} from '../helpers/gateway.js';

async function names(gateway: GatewayProcess): Promise<string[]> {
  return (await gateway.client.listTools()).tools.map((tool) => tool.name);
}

describe('loadout serve with the echo fixture', () => {
  let dirs: TempDirs;
  const gateways: GatewayProcess[] = [];
  const start = async (options: Partial<Parameters<typeof startGateway>[0]> = {}): Promise<GatewayProcess> => {
    const gateway = await startGateway({ dirs, ...options });
    gateways.push(gateway);
    return gateway;
  };
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) });
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
    await dirs.cleanup();
  });

  it('lists exactly the meta-tools when idle: no output schemas, under 6 KB, listChanged declared', async () => {
    const gateway = await start();
    const { tools } = await gateway.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(META_TOOL_NAMES);
    for (const tool of tools) {
      expect(tool.outputSchema).toBeUndefined();
      expect(tool.description!.length).toBeGreaterThan(20);
    }
    expect(Buffer.byteLength(JSON.stringify({ tools }))).toBeLessThan(6 * 1024);
    expect(gateway.client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    // The bundle lists entries computed at build time; they must be what the source computes now.
    expect(tools).toEqual(listMetaTools(TOOLSET_META_TOOLS));
  });

  it('builds a toolset from object references as well as strings, and equips a hand-written one', async () => {
    const gateway = await start();
    const built = await gateway.client.callTool({
      name: 'build-toolset',
      arguments: { name: 'refs', tools: [{ namespacedName: 'echo.echo' }, { server: 'echo', tool: 'add' }, 'echo.pid'], equip: true },
    });
    expect(built.isError, textOf(built)).toBeFalsy();
    expect((await names(gateway)).filter((name) => name.startsWith('echo_')).sort()).toEqual(['echo_add', 'echo_echo', 'echo_pid']);
    await writeFile(
      path.join(dirs.configDir, 'toolsets', 'byhand.yaml'),
      'name: byhand\ntools:\n  - namespacedName: echo.env\n  - { server: echo, tool: fail }\n',
    );
    expect(textOf(await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'byhand' } }))).toMatch(/echo_env, echo_fail/);
    const bad = await gateway.client.callTool({
      name: 'build-toolset',
      arguments: { name: 'bad', tools: [{ namespacedName: 'echo.echo', extra: 1 }] },
    });
    expect(bad.isError).toBe(true);
  });

  it('follows the downstream pagination: all five echo tools (pages of two) are in the catalog', async () => {
    const gateway = await start();
    const result = await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    const text = textOf(result);
    expect(text).toMatch(/^5 tools/);
    for (const tool of ['echo', 'add', 'fail', 'env', 'pid']) expect(text).toContain(`echo.${tool} — `);
  });

  it('exposes the tools exactly as the server lists them, under flattened names', async () => {
    const gateway = await start();
    await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
    const exposed = await rawToolsOf(gateway.client);
    const direct = new Client({ name: 'direct', version: '1' }, { capabilities: {} });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [fixture('echo')], stderr: 'ignore' }));
    const own = await rawToolsOf(direct);
    await direct.close();
    expect(own).toHaveLength(5);
    for (const tool of own) {
      expect(exposed.find((t) => t.name === `echo_${tool.name}`)).toEqual({ ...tool, name: `echo_${tool.name}` });
    }
  });

  it('sends exactly one list_changed per equip and per unequip, and only equipped tools are callable', async () => {
    const gateway = await start();
    const before = await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'hi' } });
    expect(before.isError).toBe(true);
    expect(textOf(before)).toContain('is not in the equipped toolset');

    await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo', 'echo.add'] } });
    await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'math', tools: ['echo.add'] } });
    expect(gateway.listChangedCount()).toBe(0);

    const equipped = await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'talk' } });
    expect(textOf(equipped)).toContain("Equipped 'talk': 2 tools: echo_echo, echo_add.");
    expect(textOf(equipped)).toContain('call-tool');
    expect(gateway.listChangedCount()).toBe(1);
    expect(await names(gateway)).toEqual([...META_TOOL_NAMES, 'echo_echo', 'echo_add']);
    expect(textOf(await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'hi' } }))).toBe('hi');

    await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'math' } });
    expect(gateway.listChangedCount()).toBe(2);
    const gone = await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'hi' } });
    expect(gone.isError).toBe(true);

    const unequipped = await gateway.client.callTool({ name: 'unequip-toolset', arguments: {} });
    expect(textOf(unequipped)).toContain("Unequipped 'math'");
    expect(gateway.listChangedCount()).toBe(3);
    expect(await names(gateway)).toEqual(META_TOOL_NAMES);
    // Nothing changes, so nothing is announced.
    await gateway.client.callTool({ name: 'unequip-toolset', arguments: {} });
    expect(gateway.listChangedCount()).toBe(3);
  });

  it('runs concurrent equips one at a time: one list_changed each, and the remembered toolset is the exposed one', async () => {
    const gateway = await start();
    const toolsets = { t1: ['echo.echo'], t2: ['echo.add'], t3: ['echo.fail'], t4: ['echo.env'], t5: ['echo.pid'] };
    for (const [name, tools] of Object.entries(toolsets))
      await gateway.client.callTool({ name: 'build-toolset', arguments: { name, tools } });
    const answers = await Promise.all(
      Object.keys(toolsets).map((name) => gateway.client.callTool({ name: 'equip-toolset', arguments: { name } })),
    );
    expect(answers.every((answer) => !answer.isError)).toBe(true);
    await gateway.waitForListChanged(5);
    expect(gateway.listChangedCount()).toBe(5);
    const exposed = (await names(gateway)).slice(META_TOOL_NAMES.length);
    expect(exposed).toHaveLength(1);
    const active = /Equipped: '(t\d)'/.exec(textOf(await gateway.client.callTool({ name: 'get-active-toolset', arguments: {} })))![1]!;
    expect(exposed).toEqual([toolsets[active as keyof typeof toolsets][0]!.replace('.', '_')]);
    expect(
      (JSON.parse(await readFile(path.join(dirs.dataDir, 'state.json'), 'utf8')) as { activeToolset: string | null }).activeToolset,
    ).toBe(active);
  });

  it('deletes an equipped toolset: file gone, tools withdrawn with one list_changed, nothing remembered', async () => {
    const gateway = await start();
    await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    expect(gateway.listChangedCount()).toBe(1);
    const deleted = await gateway.client.callTool({ name: 'delete-toolset', arguments: { name: 'talk' } });
    expect(textOf(deleted)).toBe("Deleted toolset 'talk' and unequipped it.");
    expect(gateway.listChangedCount()).toBe(2);
    expect(await names(gateway)).toEqual(META_TOOL_NAMES);
    expect(textOf(await gateway.client.callTool({ name: 'list-saved-toolsets', arguments: {} }))).toMatch(/^No saved toolsets yet/);
    expect(
      (JSON.parse(await readFile(path.join(dirs.dataDir, 'state.json'), 'utf8')) as { activeToolset: string | null }).activeToolset,
    ).toBeNull();
  });

  it('returns content, structuredContent and isError unchanged', async () => {
    const gateway = await start({ args: ['--equip', 'all'] });
    const sum = await gateway.client.callTool({ name: 'echo_add', arguments: { a: 2, b: 40 } });
    expect(sum).toEqual({ content: [{ type: 'text', text: '42' }], structuredContent: { sum: 42 } });
    const failed = await gateway.client.callTool({ name: 'echo_fail', arguments: {} });
    expect(failed).toEqual({ content: [{ type: 'text', text: 'this tool always fails' }], isError: true });
  });

  it('call-tool reaches a tool by namespaced or flattened name, equipped or not', async () => {
    const gateway = await start();
    const byId = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo.add', arguments: { a: 1, b: 2 } } });
    expect(byId.structuredContent).toEqual({ sum: 3 });
    const byFlat = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo_echo', arguments: { text: 'flat' } } });
    expect(textOf(byFlat)).toBe('flat');
    const downstreamError = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo.fail' } });
    expect(downstreamError).toEqual({ content: [{ type: 'text', text: 'this tool always fails' }], isError: true });
    expect(gateway.listChangedCount()).toBe(0);
  });

  it('equips every tool with all', async () => {
    const gateway = await start();
    const result = await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'all' } });
    expect(textOf(result)).toContain('5 tools');
    expect(await names(gateway)).toEqual([...META_TOOL_NAMES, 'echo_echo', 'echo_add', 'echo_fail', 'echo_env', 'echo_pid']);
    expect(gateway.listChangedCount()).toBe(1);
  });

  it('answers equip only after the client has re-read tools/list', async () => {
    const gateway = await start({ relistOnChange: false });
    const events: string[] = [];
    const heldRelists: Array<() => void> = [];
    gateway.client.setNotificationHandler('notifications/tools/list_changed', async () => {
      events.push('list_changed');
      // A slow re-list, held until the test lets it go: without loadout's wait, the answer would arrive first.
      await new Promise<void>((resolve) => heldRelists.push(resolve));
      // A plain request: listTools() does more work after the answer arrives than callTool() does.
      const { tools } = await gateway.client.request({ method: 'tools/list' });
      events.push(`relisted ${tools.length}`);
    });
    const callThenRelist = async (name: string, args: Record<string, unknown>, answered: string): Promise<void> => {
      const call = gateway.client.callTool({ name, arguments: args }).then(() => events.push(answered));
      await eventually(() => heldRelists.length > 0, 10_000, 'list_changed');
      heldRelists.shift()!();
      await call;
    };
    await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'] } });
    await callThenRelist('equip-toolset', { name: 'talk' }, 'equip answered');
    await callThenRelist('unequip-toolset', {}, 'unequip answered');
    const idle = META_TOOL_NAMES.length;
    expect(events).toEqual([
      'list_changed',
      `relisted ${idle + 1}`,
      'equip answered',
      'list_changed',
      `relisted ${idle}`,
      'unequip answered',
    ]);
  });

  it('answers equip after the cap when the client never re-lists', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: 300 } });
    const gateway = await start({ relistOnChange: false });
    const result = await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('echo_echo');
    expect(gateway.listChangedCount()).toBe(1);
  });

  it('re-equips the remembered toolset after a restart, and serve --equip overrides it', async () => {
    const first = await start();
    await first.client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    await first.client.callTool({ name: 'build-toolset', arguments: { name: 'math', tools: ['echo.add'] } });
    await first.close();
    gateways.splice(0);
    expect(
      (JSON.parse(await readFile(path.join(dirs.dataDir, 'state.json'), 'utf8')) as { activeToolset: string | null }).activeToolset,
    ).toBe('talk');

    const second = await start();
    expect(await names(second)).toEqual([...META_TOOL_NAMES, 'echo_echo']);
    expect(second.listChangedCount()).toBe(0);
    await second.close();
    gateways.splice(0);

    const third = await start({ args: ['--equip', 'math'] });
    expect(await names(third)).toEqual([...META_TOOL_NAMES, 'echo_add']);
    expect(textOf(await third.client.callTool({ name: 'get-active-toolset', arguments: {} }))).toContain("Equipped: 'math'");
  });

  it('names a server that cannot start while the other servers keep working', async () => {
    await writeServersYaml(dirs.configDir, {
      echo: nodeServer(fixture('echo')),
      broken: { command: path.join(dirs.root, 'no-such-command') },
    });
    const gateway = await start();
    const discovered = textOf(await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} }));
    expect(discovered).toContain('echo.echo');
    expect(discovered).toMatch(/! broken: not discovered: failed at .+ no program at .+no-such-command/);
    const call = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'broken.anything' } });
    expect(call.isError).toBe(true);
    expect(textOf(call)).toMatch(/^Server 'broken' could not be started/);
    const fine = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo.echo', arguments: { text: 'still here' } } });
    expect(textOf(fine)).toBe('still here');
  });

  it('names a cached server that no longer starts when its equipped tool is called', async () => {
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')), other: nodeServer(fixture('echo')) });
    const first = await start();
    expect(textOf(await first.client.callTool({ name: 'discover-all-tools', arguments: {} }))).toMatch(/^10 tools/);
    await first.close();
    gateways.splice(0);
    // The catalog cache still knows `echo`; now its command is broken.
    await writeServersYaml(dirs.configDir, { echo: { command: path.join(dirs.root, 'gone') }, other: nodeServer(fixture('echo')) });
    const second = await start({ args: ['--equip', 'all'] });
    const broken = await second.client.callTool({ name: 'echo_echo', arguments: { text: 'x' } });
    expect(broken.isError).toBe(true);
    expect(textOf(broken)).toMatch(/^Server 'echo' failed to start/);
    const working = await second.client.callTool({ name: 'other_add', arguments: { a: 1, b: 1 } });
    expect(working.structuredContent).toEqual({ sum: 2 });
  });

  it('refuses serve --equip with an unknown toolset: exit 1 and one line naming it', async () => {
    const run = promisify(execFile)(process.execPath, [
      CLI,
      'serve',
      '--config',
      dirs.configDir,
      '--data',
      dirs.dataDir,
      '--equip',
      'nope',
    ]);
    const failure = (await run.then(
      () => undefined,
      (error: unknown) => error,
    )) as { code?: number; stderr?: string; stdout?: string } | undefined;
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr?.trim().split('\n').at(-1)).toBe(
      `loadout: Toolset 'nope' not found; no toolsets are saved yet; create one with "loadout toolset create NAME server.tool …"`,
    );
  });

  it('starts with nothing equipped when the remembered toolset no longer exists', async () => {
    await writeFile(path.join(dirs.dataDir, 'state.json'), JSON.stringify({ version: 1, activeToolset: 'gone' }));
    const gateway = await start();
    expect(await names(gateway)).toEqual(META_TOOL_NAMES);
    expect(textOf(await gateway.client.callTool({ name: 'get-active-toolset', arguments: {} }))).toMatch(/^No toolset is equipped/);
  });
});
