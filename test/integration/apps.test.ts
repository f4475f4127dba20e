// MCP Apps (io.modelcontextprotocol/ui) through loadout, over real stdio against the built CLI,
// in front of the App fixture (test/fixtures/appServer.ts): a View's call by its server's own tool
// name reaches that server once the session has the App open (its ui:// resource read, or its UI
// tool called), is refused before, and when two open Apps' servers share the name; the View's
// tool is checked against its visibility and audited as the App's; app-only tools are never
// offered to the model; a ui:// URI two servers share stays ui://, its metadata unchanged.
import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { VIEW_UI_META, VIEW_URI } from '../fixtures/appView.js';

const APPS = 'io.modelcontextprotocol/ui';
const appServer = (name: string) => nodeServer(fixture('appServer'), { args: [fixture('appServer'), '--name', name] });

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  return { text: textOf(result), isError: result.isError === true };
}

describe('MCP Apps through loadout', () => {
  const sandbox = useGatewaySandbox();

  it("routes a View's call by its server's own name once the App is open, checked against its visibility and audited as the App's", async () => {
    await writeServersYaml(sandbox.dirs.configDir, { clock: appServer('clock') }, { audit: { flush_ms: 50 } });
    const gateway = await sandbox.start({ args: ['--equip', 'all'] });
    const { client } = gateway;

    const before = await call(client, 'get-time');
    expect(before.isError).toBe(true);
    expect(before.text).toContain('get-time');

    const read = await client.readResource({ uri: VIEW_URI });
    expect(read.contents[0]).toMatchObject({ uri: VIEW_URI, mimeType: 'text/html;profile=mcp-app', _meta: { ui: VIEW_UI_META } });
    expect(await call(client, 'get-time')).toEqual({ text: 'get-time from clock', isError: false });
    // A plain tool (no visibility given) is the View's to call too; a model-only one is not.
    expect(await call(client, 'zone-name')).toEqual({ text: 'zone-name from clock', isError: false });
    const modelOnly = await call(client, 'set-alarm');
    expect(modelOnly.isError).toBe(true);
    expect(modelOnly.text).toContain('visibility');
    await gateway.close();

    const run = await runCli(sandbox.dirs, ['audit', '--json']);
    const records = (JSON.parse(run.stdout) as { records: Array<Record<string, unknown>> }).records;
    const fromApp = records.filter((record) => record.via === 'app');
    expect(fromApp.map(({ server, tool, exposed_tool, outcome }) => ({ server, tool, exposed_tool, outcome }))).toEqual([
      { server: 'clock', tool: 'get-time', exposed_tool: 'get-time', outcome: 'ok' },
      { server: 'clock', tool: 'zone-name', exposed_tool: 'zone-name', outcome: 'ok' },
      { server: undefined, tool: undefined, exposed_tool: 'set-alarm', outcome: 'error' },
    ]);
  });

  it("refuses a View's call of a tool the policy hides, as if it did not exist", async () => {
    const policy = {
      local: { subject: 'dev', groups: ['eng'] },
      rules: [{ groups: ['eng'], tools: ['clock.show-clock', 'clock.get-time'], resources: ['clock'] }],
    };
    await writeServersYaml(sandbox.dirs.configDir, { clock: appServer('clock') }, { policy });
    const { client } = await sandbox.start({ args: ['--equip', 'all'] });
    await client.readResource({ uri: VIEW_URI });
    expect(await call(client, 'get-time')).toEqual({ text: 'get-time from clock', isError: false });
    const hidden = await call(client, 'zone-name');
    expect(hidden.isError).toBe(true);
    expect(hidden.text).not.toContain('from clock');
  });

  it.each(['2025-11-25', '2026-07-28'] as const)('opens an App when its UI tool is called (%s)', async (era) => {
    await writeServersYaml(sandbox.dirs.configDir, { clock: appServer('clock') });
    const { client } = await sandbox.start({
      args: ['--equip', 'all'],
      ...(era === '2026-07-28' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    });
    expect(client.getNegotiatedProtocolVersion()).toBe(era);
    expect((await call(client, 'get-time')).isError).toBe(true);
    expect(await call(client, 'clock_show-clock')).toEqual({ text: 'show-clock from clock', isError: false });
    expect(await call(client, 'get-time')).toEqual({ text: 'get-time from clock', isError: false });
  });

  it('refuses a name two open Apps share, naming both; a ui:// URI they share stays ui://', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { a: appServer('a'), b: appServer('b') });
    const { client } = await sandbox.start({ args: ['--equip', 'all'] });
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri).sort()).toEqual(['ui://loadout/a/clock/view.html', 'ui://loadout/b/clock/view.html']);
    expect(resources[0]!._meta).toEqual({ ui: VIEW_UI_META });
    const { tools } = await client.listTools();
    const views = tools.filter((tool) => tool.name.endsWith('show-clock')).map((tool) => [tool.name, tool._meta]);
    expect(views).toEqual([
      ['a_show-clock', { ui: { resourceUri: 'ui://loadout/a/clock/view.html' } }],
      ['b_show-clock', { ui: { resourceUri: 'ui://loadout/b/clock/view.html' } }],
    ]);

    const read = await client.readResource({ uri: 'ui://loadout/a/clock/view.html' });
    expect(read.contents[0]).toMatchObject({ uri: 'ui://loadout/a/clock/view.html', mimeType: 'text/html;profile=mcp-app' });
    expect(await call(client, 'get-time')).toEqual({ text: 'get-time from a', isError: false });
    await client.readResource({ uri: 'ui://loadout/b/clock/view.html' });
    const both = await call(client, 'get-time');
    expect(both.isError).toBe(true);
    expect(both.text).toContain('(a, b)');
  });

  it("lists an open App's tools under their own names to a host that declared the extension, and to no other", async () => {
    await writeServersYaml(sandbox.dirs.configDir, { clock: appServer('clock') });
    const declared = await sandbox.start({ args: ['--equip', 'all'], capabilities: { extensions: { [APPS]: {} } } });
    const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
    expect(await names(declared.client)).not.toContain('get-time');
    await declared.client.readResource({ uri: VIEW_URI });
    await declared.waitForListChanged(1);
    const { tools } = await declared.client.listTools();
    // Under their own names: every tool a View may call (not the model-only set-alarm), marked as the App's.
    const own = tools.filter((tool) => ['show-clock', 'get-time', 'set-alarm', 'zone-name'].includes(tool.name));
    expect(own.map((tool) => [tool.name, tool._meta])).toEqual([
      ['show-clock', { ui: { resourceUri: VIEW_URI, visibility: ['app'] } }],
      ['get-time', { ui: { visibility: ['app'] } }],
      ['zone-name', { ui: { visibility: ['app'] } }],
    ]);
    expect(await call(declared.client, 'get-time')).toEqual({ text: 'get-time from clock', isError: false });

    const plain = await sandbox.start({ args: ['--equip', 'all'] });
    const before = await names(plain.client);
    await plain.client.readResource({ uri: VIEW_URI });
    expect(await names(plain.client)).toEqual(before);
    expect(plain.listChangedCount()).toBe(0);
  });

  it('never offers an app-only tool to the model: not searched, not mapped, not equipped on its own, but with its UI tool', async () => {
    await writeServersYaml(sandbox.dirs.configDir, { clock: appServer('clock') });
    const { client } = await sandbox.start();
    for (const args of [{ query: 'time for the clock view' }, {}, { server: 'clock' }, { server: 'clock', detail: true }]) {
      const found = await call(client, 'discover-all-tools', args);
      expect(found.text).toContain('clock');
      expect(found.text).not.toContain('get-time');
    }
    expect((await call(client, 'call-tool', { tool: 'clock.get-time' })).isError).toBe(true);
    const alone = await call(client, 'build-toolset', { name: 'alone', tools: ['clock.get-time'], equip: true });
    expect(alone.isError).toBe(true);
    expect(alone.text).toContain("an App's own tool");

    expect((await call(client, 'build-toolset', { name: 'clock', tools: ['clock.show-clock'], equip: true })).isError).toBe(false);
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'clock_get-time')?._meta).toEqual({ ui: { visibility: ['app'] } });
    expect(tools.map((tool) => tool.name)).not.toContain('clock_zone-name');
  });
});
