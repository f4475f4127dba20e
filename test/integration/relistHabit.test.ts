// Equip answers as each kind of client needs them: held for the re-read of a client that re-lists
// (Claude Code), answered at once with the call-tool hint for one that has shown it does not
// (Codex CLI by default), and never held for a client known to re-list only after the answer; what
// a client was seen to do is remembered for its next run, in another process.
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture, makeTempDirs, nodeServer, startGateway, textOf, writeServersYaml } from '../helpers/gateway.js';
import type { GatewayProcess, StartOptions, TempDirs } from '../helpers/gateway.js';
import { usePostgresDatabase } from '../helpers/postgres.js';
import { TEST_SECRET_KEY } from '../helpers/storeBackends.js';
import { openPostgresStore } from '../../src/store/index.js';

const RELIST_WAIT_MS = 1500;

describe('equip answers and the client re-reading tools/list', () => {
  let dirs: TempDirs;
  const gateways: GatewayProcess[] = [];
  beforeEach(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: RELIST_WAIT_MS } });
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
    await dirs.cleanup();
  });
  const start = async (options: Omit<StartOptions, 'dirs'>): Promise<GatewayProcess> => {
    const gateway = await startGateway({ dirs, ...options });
    gateways.push(gateway);
    return gateway;
  };
  const timedEquip = async (gateway: GatewayProcess, name: string, tool: string): Promise<{ ms: number; text: string }> => {
    const startedMs = performance.now();
    const result = await gateway.client.callTool({ name: 'build-toolset', arguments: { name, tools: [tool], equip: true } });
    expect(result.isError, textOf(result)).toBeFalsy();
    return { ms: performance.now() - startedMs, text: textOf(result) };
  };

  it('stops holding equip answers once the client has let one hold run out without re-reading', async () => {
    const gateway = await start({ relistOnChange: false });
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    const first = await timedEquip(gateway, 'talk', 'echo.echo');
    expect(first.ms).toBeGreaterThanOrEqual(RELIST_WAIT_MS - 50);
    expect(first.text).toContain('Your client does not re-read its tool list, so call them with call-tool');
    const second = await timedEquip(gateway, 'math', 'echo.add');
    expect(second.ms).toBeLessThan(RELIST_WAIT_MS / 2);
    expect(second.text).toContain('Your client does not re-read its tool list, so call them with call-tool');
    expect(gateway.listChangedCount()).toBe(2);
    // call-tool reaches the equipped tool without the list.
    const called = await gateway.client.callTool({ name: 'call-tool', arguments: { tool: 'echo_add', arguments: { a: 1, b: 2 } } });
    expect(textOf(called)).toBe('3');
  });

  it('keeps holding for a client that re-reads each time', async () => {
    const gateway = await start({});
    for (const [name, tool] of [
      ['talk', 'echo.echo'],
      ['math', 'echo.add'],
      ['env', 'echo.env'],
    ] as const) {
      const equip = await timedEquip(gateway, name, tool);
      expect(equip.ms).toBeLessThan(RELIST_WAIT_MS - 50);
      expect(equip.text).toContain('If they do not appear in your tool list');
    }
    expect(gateway.listChangedCount()).toBe(3);
  });

  it('never holds for a client known to re-read only after the answer (Codex CLI)', async () => {
    const gateway = await start({ relistOnChange: false, clientName: 'codex-mcp-client' });
    // Discovery done first, so the time measured is the equip's own.
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    const first = await timedEquip(gateway, 'talk', 'echo.echo');
    expect(first.ms).toBeLessThan(RELIST_WAIT_MS / 2);
    expect(first.text).toContain('If they do not appear in your tool list');
  });

  it("remembers in the data dir that a client never re-reads, so its next run's first equip is not held", async () => {
    const holdMs = 5000;
    await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: holdMs } });
    // A client like Qwen Code under a name loadout does not know: it never re-lists, and every run is a new process's session.
    const run = { relistOnChange: false, clientName: 'fake-agent-cli', args: ['--log-level', 'debug'] };
    const first = await start(run);
    await first.client.callTool({ name: 'discover-all-tools', arguments: {} });
    expect((await timedEquip(first, 'talk', 'echo.echo')).ms).toBeGreaterThanOrEqual(holdMs - 50);
    await first.close();
    const kept = JSON.parse(await readFile(path.join(dirs.dataDir, 'clients.json'), 'utf8')) as { clients: Record<string, unknown> };
    expect(kept.clients['fake-agent-cli@1.0.0']).toMatchObject({ relist: 'never' });

    const second = await start(run);
    await second.client.callTool({ name: 'discover-all-tools', arguments: {} });
    const equip = await timedEquip(second, 'math', 'echo.add');
    expect(equip.ms).toBeLessThan(holdMs / 2);
    expect(equip.text).toContain('Your client does not re-read its tool list, so call them with call-tool');
    expect(second.stderr()).toMatch(/client's re-list habit taken from its earlier sessions/);
    // Another version of the client is learned again: one hold.
    const upgraded = await start({ ...run, clientVersion: '2.0.0' });
    await upgraded.client.callTool({ name: 'discover-all-tools', arguments: {} });
    expect((await timedEquip(upgraded, 'env', 'echo.env')).ms).toBeGreaterThanOrEqual(holdMs - 50);
  }, 60_000);

  it('never holds for Qwen Code, known by name not to re-list', async () => {
    const gateway = await start({ relistOnChange: false, clientName: 'qwen-cli-mcp-client-loadout' });
    await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
    const first = await timedEquip(gateway, 'talk', 'echo.echo');
    expect(first.ms).toBeLessThan(RELIST_WAIT_MS / 2);
    expect(first.text).toContain('Your client does not re-read its tool list, so call them with call-tool');
  });
});

describe('a client habit in store mode', () => {
  const databaseUrl = usePostgresDatabase();
  const machines: TempDirs[] = [];
  afterEach(async () => {
    await Promise.all(machines.splice(0).map((dirs) => dirs.cleanup()));
  });

  it('is kept in the store: a replica on another machine does not hold the first equip of a client another replica learned', async () => {
    const env = { LOADOUT_STORE_URL: databaseUrl(), LOADOUT_SECRET_KEY: TEST_SECRET_KEY };
    const run = async (): Promise<{ ms: number; dirs: TempDirs }> => {
      const dirs = await makeTempDirs();
      machines.push(dirs);
      await writeServersYaml(dirs.configDir, { echo: nodeServer(fixture('echo')) }, { gateway: { relist_wait_ms: RELIST_WAIT_MS } });
      const gateway = await startGateway({ dirs, env, relistOnChange: false, clientName: 'fake-agent-cli' });
      try {
        await gateway.client.callTool({ name: 'discover-all-tools', arguments: {} });
        const startedMs = performance.now();
        const result = await gateway.client.callTool({
          name: 'build-toolset',
          arguments: { name: 'talk', tools: ['echo.echo'], equip: true },
        });
        expect(result.isError, textOf(result)).toBeFalsy();
        return { ms: performance.now() - startedMs, dirs };
      } finally {
        await gateway.close();
      }
    };
    const first = await run();
    expect(first.ms).toBeGreaterThanOrEqual(RELIST_WAIT_MS - 50);
    const store = await openPostgresStore({ url: databaseUrl(), secretKey: TEST_SECRET_KEY, listen: false });
    try {
      expect((await store.clients.get('fake-agent-cli@1.0.0'))?.value).toMatchObject({ relist: 'never' });
    } finally {
      await store.close();
    }
    // Not in the data dir: in store mode no replica writes clients.json.
    await expect(access(path.join(first.dirs.dataDir, 'clients.json'))).rejects.toThrow();
    expect((await run()).ms).toBeLessThan(RELIST_WAIT_MS / 2);
  }, 60_000);
});
