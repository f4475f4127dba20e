// Both protocol eras on `loadout serve` (stdio): an SDK client that negotiates ('auto') ends up in
// 2026-07-28 (server/discover, no initialize) and discovers, equips, hears of the new tools on its
// subscriptions/listen stream and calls one; a client that only knows 2025 still gets initialize.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { eventually, fixture, nodeServer, textOf, useGatewaySandbox, writeServersYaml } from '../helpers/gateway.js';

describe('loadout serve in both protocol eras', () => {
  const sandbox = useGatewaySandbox();

  beforeEach(async () => {
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) });
  });

  it('serves a negotiating client in the 2026-07-28 era: discover, equip, listen, call', async () => {
    const gateway = await sandbox.start({ versionNegotiation: { mode: 'auto' } });
    const { client } = gateway;
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getDiscoverResult()?.capabilities.tools).toMatchObject({ listChanged: true });

    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
    const found = await client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } });
    expect(textOf(found)).toContain('echo.echo');
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    expect(built.isError).toBeFalsy();
    await gateway.waitForListChanged(1);

    const { tools } = await client.listTools(undefined, { cacheMode: 'bypass' });
    expect(tools.map((tool) => tool.name)).toContain('echo_echo');
    expect(textOf(await client.callTool({ name: 'echo_echo', arguments: { text: 'modern hello' } }))).toBe('modern hello');
    await subscription.close();
  });

  it('answers an equip at once when the client has no listen stream to hear the change on, and holds it when it has', async () => {
    // Long enough that an equip waiting for a re-list the client was never told to make would time the test out.
    await writeServersYaml(sandbox.dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: 600_000 } });
    const { client } = await sandbox.start({ versionNegotiation: { mode: 'auto' } });
    const built = await client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    expect(textOf(built)).toContain('echo_echo');
    // A second change it could not hear either, past the time a re-reading client takes (1 s), teaches
    // nothing about whether it re-reads: the answer gives no call-tool-only hint.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const rebuilt = await client.callTool({ name: 'build-toolset', arguments: { name: 'math', tools: ['echo.add'], equip: true } });
    expect(textOf(rebuilt)).not.toContain('does not re-read');

    // With a stream for tool changes open, the answer is held until the client has re-read tools/list.
    const subscription = await client.listen({ toolsListChanged: true });
    let heard!: () => void;
    const told = new Promise<void>((resolve) => (heard = resolve));
    client.setNotificationHandler('notifications/tools/list_changed', () => heard());
    let answered = false;
    const unequipped = client.callTool({ name: 'unequip-toolset', arguments: {} }).then((result) => ((answered = true), result));
    await told;
    // The unequip is remembered in state.json before it is answered, held or not; once it is, a request's
    // answer comes after all the gateway wrote before it: an unequip answer not held would have come first.
    const stateFile = path.join(sandbox.dirs.dataDir, 'state.json');
    await eventually(async () => /"activeToolset": *null/.test(await readFile(stateFile, 'utf8')), 10_000, 'the unequip remembered');
    await client.listPrompts();
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    await client.listTools(undefined, { cacheMode: 'bypass' });
    expect((await unequipped).isError).toBeFalsy();
    await subscription.close();
  });

  it('serves a fresh install to a client that probes on a sibling process: a probe cut short is no failed discovery', async () => {
    // The SDK's stdio client probes server/discover on a second loadout process and ends it at
    // once, while its background discovery of slow is still under way. That process must not
    // record slow as failed: the real one would then not discover it for 30 s.
    await writeServersYaml(sandbox.dirs.configDir, {
      slow: nodeServer(fixture('slow-start'), { env: { SLOW_START_MS: '800' } }),
    });
    const gateway = await sandbox.start({ versionNegotiation: { mode: 'auto' }, args: ['--equip', 'all'] });
    expect(gateway.client.getProtocolEra()).toBe('modern');
    const called = await gateway.client.callTool({ name: 'slow_pid', arguments: {} });
    expect(textOf(called)).toMatch(/^\d+$/);
  });

  it('still serves a 2025-only client with initialize', async () => {
    const gateway = await sandbox.start();
    expect(gateway.client.getProtocolEra()).toBe('legacy');
    await gateway.client.callTool({ name: 'build-toolset', arguments: { name: 'talk', tools: ['echo.echo'], equip: true } });
    await gateway.waitForListChanged(1);
    expect(textOf(await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'legacy hello' } }))).toBe('legacy hello');
  });
});
