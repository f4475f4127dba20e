import path from 'node:path';
import { SdkErrorCode } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ServerConfigSchema, type ServerConfig } from '../../src/config/index.js';
import { ServerPool, type EraVerdict, type PoolEvent } from '../../src/downstream/index.js';
import { silentLogger, type Logger } from '../../src/shared/index.js';
import { descendantsOf, eventually, fixture, isAlive, textOf } from '../helpers/gateway.js';
import { eraFixtureLog } from '../helpers/eraFixtureLog.js';
import { useTempDir } from '../helpers/tempDir.js';

function stdio(script: string, extra: Record<string, unknown> = {}): ServerConfig {
  return ServerConfigSchema.parse({ command: process.execPath, args: [script], ...extra });
}

function eraServer(log: string, ...args: string[]): ServerConfig {
  return ServerConfigSchema.parse({ command: process.execPath, args: [fixture('eraServer'), '--log', log, ...args] });
}

// A modern verdict as the catalog cache keeps it; with list changes, a start opens a listen stream.
function rememberedModern(listChanged: boolean): EraVerdict {
  return {
    era: 'modern',
    checkedAt: new Date().toISOString(),
    discover: {
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: listChanged ? { listChanged: true } : {} },
      serverInfo: { name: 'era-fixture', version: '1.0.0' },
    },
  };
}

describe('ServerPool with real servers', () => {
  const tempDir = useTempDir('loadout-pool-');
  let pool: ServerPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  function poolOf(configs: Record<string, ServerConfig>, logger = silentLogger): { pool: ServerPool; events: PoolEvent[] } {
    pool = new ServerPool(configs, { logger });
    const events: PoolEvent[] = [];
    pool.onEvent((event) => events.push(event));
    return { pool, events };
  }

  // ServerPool.request is the one way any method reaches a downstream server.
  it('sends any method and reports notifications: progress to the caller, the rest as events', async () => {
    const { pool, events } = poolOf({ box: stdio(fixture('interactive')) });
    expect(await pool.request('box', 'ping', undefined)).toEqual({});
    const listed = await pool.request('box', 'tools/list', undefined);
    expect((listed.tools as Array<{ name: string }>).map((tool) => tool.name)).toContain('echo');
    expect((await pool.connection('box')).serverCapabilities?.tools?.listChanged).toBe(true);

    const progress: unknown[] = [];
    const done = await pool.request(
      'box',
      'tools/call',
      { name: 'progress', arguments: { steps: 2 } },
      { onProgress: (step) => progress.push(step) },
    );
    expect(done).toMatchObject({ content: [{ type: 'text', text: 'did 2 steps' }] });
    expect(progress).toEqual([1, 2].map((step) => ({ progress: step, total: 2, message: `step ${step}` })));

    await pool.request('box', 'tools/call', { name: 'grow' });
    await eventually(() => events.some((event) => event.type === 'tools-changed'), 10_000, 'tools-changed');
    expect(events.filter((event) => event.type === 'notification')).toEqual([
      { type: 'notification', server: 'box', notification: { method: 'notifications/tools/list_changed' } },
    ]);

    await expect(pool.request('box', 'no/such/method', {})).rejects.toMatchObject({ code: -32601 });
    expect(pool.status('box').inFlight).toBe(0);
  });

  it('does not stop a server at once when its idle timeout is beyond what a timer can hold', async () => {
    const { pool } = poolOf({ echo: stdio(fixture('echo'), { idle_timeout_minutes: 1_000_000 }) });
    await pool.callTool('echo', 'pid', {});
    // Node runs a delay past 2^31-1 ms as 1 ms; timers of equal delay fire in the order they were
    // set, so this one, set after the idle timer, fires after it would have.
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(pool.isConnected('echo')).toBe(true);
  });

  it('restarts a server whose config changed only after its call in flight has finished', async () => {
    const { pool, events } = poolOf({ slow: stdio(fixture('slow')) });
    const firstPid = textOf(await pool.callTool('slow', 'pid', {}));
    const call = pool.callTool('slow', 'sleep', { ms: 800 });
    expect(pool.status('slow').inFlight).toBe(1);
    pool.configure({ slow: stdio(fixture('slow'), { env: { CHANGED: '1' } }) });
    expect(pool.isConnected('slow')).toBe(true);
    expect(textOf(await call)).toBe('slept 800 ms');
    await eventually(() => events.some((event) => event.type === 'stopped'), 10_000, 'the outdated connection to stop');
    expect(await isAlive(Number(firstPid))).toBe(false);
    expect(textOf(await pool.callTool('slow', 'pid', {}))).not.toBe(firstPid);
  });

  it('aborts a start still in its handshake when it closes, leaving no child behind', async () => {
    const { pool } = poolOf({ stuck: stdio(fixture('hang'), { env: { HANG_ON_START: '1' }, timeout_seconds: 600 }) });
    const start = pool.connection('stuck');
    start.catch(() => undefined);
    await eventually(async () => (await descendantsOf(process.pid)).length > 0, 10_000, 'the server to be spawned');
    await pool.close();
    await expect(start).rejects.toThrow(/failed to start/);
    await eventually(async () => (await descendantsOf(process.pid)).length === 0, 10_000, 'the child to be gone');
  });

  it('probes a server whose remembered era went stale once, not again at its next start', async () => {
    const log = path.join(tempDir(), 'era.jsonl');
    // Remembered as modern (with no list changes, so no listen stream tests the era at start), but 2025-only now.
    const { pool } = poolOf({ shifty: eraServer(log, '--era', 'legacy', '--exit-before-initialize') });
    let remembered = rememberedModern(false);
    pool.useEraMemory(() => Promise.resolve(remembered));
    const probes = async () => (await eraFixtureLog(log)).filter((message) => message.method === 'server/discover').length;

    await pool.connection('shifty');
    // Discovery asks for a probe; its request on the stale connection is refused, so the server is started again.
    const definitions = await pool.listDefinitions('shifty', { probeEra: true });
    expect(definitions.tools.map((tool) => tool.name)).toContain('echo');
    expect(await probes()).toBe(1);
    remembered = { era: 'legacy', checkedAt: new Date().toISOString() };

    await pool.discard('shifty', 'restarted by the test');
    expect(textOf(await pool.callTool('shifty', 'echo', { text: 'again' }))).toBe('again');
    expect(await probes()).toBe(1);
  });

  it('starts a server remembered as modern that now exits on any request before initialize, in the 2025 era', async () => {
    const log = path.join(tempDir(), 'era.jsonl');
    // Remembered with list changes, so its start opens a listen stream, on which the downgraded server exits.
    const { pool } = poolOf({ brittle: eraServer(log, '--era', 'legacy', '--exit-before-initialize') });
    pool.useEraMemory(() => Promise.resolve(rememberedModern(true)));
    // Its re-probe makes it exit too: like any such server, it is then started afresh in the 2025 era.
    expect(textOf(await pool.callTool('brittle', 'echo', { text: 'still up' }))).toBe('still up');
    expect((await eraFixtureLog(log)).map((message) => message.method)).toContain('initialize');
  });

  it('probes a server whose remembered server/discover answer the SDK cannot use, rather than failing its start', async () => {
    const log = path.join(tempDir(), 'era.jsonl');
    const { pool } = poolOf({ odd: eraServer(log, '--era', 'modern') });
    // An object, as the catalog cache checks, but no DiscoverResult (a hand edit, another SDK's shape).
    pool.useEraMemory(() =>
      Promise.resolve({ era: 'modern', checkedAt: new Date().toISOString(), discover: { supportedVersions: 'all' } as never }),
    );
    expect(textOf(await pool.callTool('odd', 'echo', { text: 'probed' }))).toBe('probed');
    expect((await eraFixtureLog(log)).map((message) => message.method)).toContain('server/discover');
  });

  it('takes a crash under the first call of a server remembered as modern, whose listen stream opened, for a crash', async () => {
    const log = path.join(tempDir(), 'era.jsonl');
    const { pool } = poolOf({ steady: eraServer(log, '--era', 'modern') });
    pool.useEraMemory(() => Promise.resolve(rememberedModern(true)));
    await pool.connection('steady');
    const calls = async () => (await eraFixtureLog(log)).filter((message) => message.method === 'tools/call');
    const call = pool.callTool('steady', 'count', { n: 1, delayMs: 2000 });
    await eventually(async () => (await calls()).length === 1, 10_000, 'the call to reach the server');
    process.kill((await calls())[0]!.pid, 'SIGKILL');
    // The era was confirmed by the listen stream: the call is not sent again to a re-probed server.
    await expect(call).rejects.toMatchObject({ code: SdkErrorCode.ConnectionClosed });
    expect(await calls()).toHaveLength(1);
    expect((await eraFixtureLog(log)).map((message) => message.method)).not.toContain('server/discover');
  });

  it('stops listening to a modern server whose connection was lost', async () => {
    const log = path.join(tempDir(), 'era.jsonl');
    const relistens: string[] = [];
    const logger: Logger = {
      ...silentLogger,
      child: () => logger,
      debug: (fields, message) => void (message?.startsWith('listen stream lost') && relistens.push(JSON.stringify(fields))),
    };
    const { pool, events } = poolOf({ live: eraServer(log, '--era', 'modern') }, logger);
    await pool.connection('live');
    const listened = async () => (await eraFixtureLog(log)).find((message) => message.method === 'subscriptions/listen');
    await eventually(async () => (await listened()) !== undefined, 10_000, 'the listen stream');
    process.kill((await listened())!.pid, 'SIGKILL');
    await eventually(() => events.some((event) => event.type === 'lost'), 10_000, 'the connection lost');
    // The next start takes far longer than the lost stream took to report itself (at once).
    await pool.connection('live');
    // The lost connection's stream is not opened again and again on a client that is gone.
    expect(relistens).toEqual([]);
  });
});
