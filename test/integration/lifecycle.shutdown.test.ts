import { describe, expect, it } from 'vitest';
import {
  descendantsOf,
  eventually,
  fixture,
  isAlive,
  nodeServer,
  textOf,
  useGatewaySandbox,
  waitForExit,
  writeServersYaml,
  type GatewayProcess,
} from '../helpers/gateway.js';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { cachedTool, callThrough, pidOf, writeToolCache } from '../helpers/lifecycle.js';

describe('gateway shutdown', () => {
  const sandbox = useGatewaySandbox();

  /** A gateway with every server running (lazy ones called once); returns it and its children. */
  async function gatewayWithChildren(
    servers: Record<string, unknown>,
    lazyServers: string[],
  ): Promise<{ gateway: GatewayProcess; pids: number[] }> {
    await writeServersYaml(sandbox.dirs.configDir, servers);
    await writeToolCache(sandbox.dirs.dataDir, Object.fromEntries(Object.keys(servers).map((server) => [server, [cachedTool('pid')]])));
    const gateway = await sandbox.start();
    for (const server of lazyServers) await pidOf(gateway, server);
    const expected = Object.keys(servers).length;
    await eventually(async () => (await descendantsOf(gateway.pid)).length === expected, 10_000, `${expected} children`);
    return { gateway, pids: await descendantsOf(gateway.pid) };
  }

  async function expectAllGone(pids: number[]): Promise<void> {
    // A child killed as the gateway exits may take a moment to be reaped; an orphan never goes.
    await eventually(async () => (await Promise.all(pids.map(isAlive))).every((alive) => !alive), 2000, 'every child to be gone');
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} ends every child, including one that ignores SIGTERM and one still starting`, async () => {
      const { gateway, pids } = await gatewayWithChildren(
        {
          echo: nodeServer(fixture('echo')),
          stubborn: nodeServer(fixture('ignore-sigterm')),
          kept: nodeServer(fixture('echo'), { always_on: true }),
          starting: nodeServer(fixture('hang'), { always_on: true, env: { HANG_ON_START: '1' } }),
        },
        ['echo', 'stubborn'],
      );
      expect(pids).toHaveLength(4);
      process.kill(gateway.pid, signal);
      await waitForExit(gateway.pid);
      await expectAllGone(pids);
    });
  }

  it('SIGTERM writes the audit records in memory first, while a child that ignores it is still being ended', async () => {
    // Records wait in memory for a minute: only the shutdown writes them.
    await writeServersYaml(sandbox.dirs.configDir, { stubborn: nodeServer(fixture('ignore-sigterm')) }, { audit: { flush_ms: 60_000 } });
    await writeToolCache(sandbox.dirs.dataDir, { stubborn: [cachedTool('pid')] });
    const gateway = await sandbox.start();
    await callThrough(gateway, 'stubborn.pid');
    const [stubborn] = await descendantsOf(gateway.pid);
    const auditDir = path.join(sandbox.dirs.dataDir, 'audit');
    const written = async () => (await readdir(auditDir).catch(() => [])).length > 0;
    expect(await written()).toBe(false);
    process.kill(gateway.pid, 'SIGTERM');
    await eventually(written, 5000, 'the audit day file');
    // Only SIGKILL ends the child, ~1 s into the close: the records did not wait for it.
    expect(await isAlive(stubborn!)).toBe(true);
    await waitForExit(gateway.pid);
  });

  it('SIGTERM while a server is still starting exits within 2 s and leaves no child or grandchild', async () => {
    await writeServersYaml(sandbox.dirs.configDir, {
      sleepy: nodeServer(fixture('slow-start'), { always_on: true }),
      kept: nodeServer(fixture('echo'), { always_on: true }),
    });
    const gateway = await sandbox.start();
    // The echo child, the sleeping child and its grandchild.
    await eventually(async () => (await descendantsOf(gateway.pid)).length === 3, 10_000, 'three descendants');
    const pids = await descendantsOf(gateway.pid);
    const signalledAt = Date.now();
    process.kill(gateway.pid, 'SIGTERM');
    await waitForExit(gateway.pid, 5000);
    expect(Date.now() - signalledAt).toBeLessThan(2000);
    await expectAllGone(pids);
  });

  it('answers a stdio line over the limit with an error naming it, keeps serving, and still ends on stdin close', async () => {
    const { gateway, pids } = await gatewayWithChildren({ kept: nodeServer(fixture('echo'), { always_on: true }) }, []);
    const huge = 'x'.repeat(11 * 1024 * 1024);
    await expect(
      gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'kept.pid', arguments: { text: huge } } }),
    ).rejects.toThrow(/exceeds the 10485760-byte limit on one stdio message \(MAX_CLIENT_MESSAGE_BYTES\)/);
    const after = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'kept.pid', arguments: {} } });
    expect(textOf(after)).toBe(String(pids[0]));
    const closedAt = Date.now();
    await gateway.close();
    expect(Date.now() - closedAt).toBeLessThan(2000);
    await expectAllGone(pids);
  });

  it('closing stdin ends every child', async () => {
    const { gateway, pids } = await gatewayWithChildren(
      { one: nodeServer(fixture('echo')), two: nodeServer(fixture('slow')), kept: nodeServer(fixture('echo'), { always_on: true }) },
      ['one', 'two'],
    );
    expect(pids).toHaveLength(3);
    await gateway.close();
    expect(gateway.stderr()).toContain('stdin closed');
    await expectAllGone(pids);
  });
});
