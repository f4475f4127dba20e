import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fixture,
  makeTempDirs,
  nodeServer,
  startGateway,
  textOf,
  writeServersYaml,
  type GatewayProcess,
  type TempDirs,
} from '../helpers/gateway.js';
import { cachedTool, callThrough, writeToolCache } from '../helpers/lifecycle.js';

const MEGABYTE = 1024 * 1024;

describe('misbehaving downstream servers', () => {
  let dirs: TempDirs;
  let gateway: GatewayProcess;
  beforeAll(async () => {
    dirs = await makeTempDirs();
    await writeServersYaml(dirs.configDir, {
      garbage: nodeServer(fixture('garbage')),
      hang: nodeServer(fixture('hang'), { timeout_seconds: 1 }),
      big: nodeServer(fixture('big')),
      crash: nodeServer(fixture('crash'), { env: { CRASH_AFTER_CALLS: '2' } }),
      echo: nodeServer(fixture('echo')),
      slow: nodeServer(fixture('slow')),
    });
    await writeToolCache(dirs.dataDir, {
      garbage: [cachedTool('echo')],
      hang: [cachedTool('hang'), cachedTool('echo')],
      big: [cachedTool('big')],
      crash: [cachedTool('echo')],
      echo: [cachedTool('echo')],
      slow: [cachedTool('sleep')],
    });
    // The client must accept the big result too; the SDK's default limit is 10 MB.
    gateway = await startGateway({ dirs, maxBufferSize: 64 * MEGABYTE });
  });
  afterAll(async () => {
    await gateway.close();
    await dirs.cleanup();
  });

  async function gatewayStillAnswers(): Promise<void> {
    const result = await callThrough(gateway, 'echo.echo', { text: 'still here' });
    expect(textOf(result)).toBe('still here');
  }

  it('ignores non-JSON lines a server prints on stdout between its messages', async () => {
    for (const text of ['one', 'two', 'three']) {
      const result = await callThrough(gateway, 'garbage.echo', { text });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe(text);
    }
    await gatewayStillAnswers();
  });

  it('answers a call that hangs with an error naming the server and its timeout_seconds', async () => {
    const result = await callThrough(gateway, 'hang.hang');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Server 'hang' did not answer hang.hang within 1 s");
    // The same server still answers other calls.
    expect(textOf(await callThrough(gateway, 'hang.echo', { text: 'ok' }))).toBe('ok');
    await gatewayStillAnswers();
  });

  it('passes a 10 MB result through intact', async () => {
    const result = await callThrough(gateway, 'big.big', { mb: 10 });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toHaveLength(10 * MEGABYTE);
    await gatewayStillAnswers();
  });

  it('passes the progress notifications of a slow call through to the client', async () => {
    const progress: number[] = [];
    const result = await gateway.client.callTool(
      { name: 'call-tool', arguments: { tool: 'slow.sleep', arguments: { ms: 2000 } } },
      { onprogress: (update) => progress.push(update.progress), resetTimeoutOnProgress: true },
    );
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe('slept 2000 ms');
    // The SDK client handles a notification a microtask later than a response, so progress sent
    // just before the result (the 4th) can be dropped by any SDK client, this test's included.
    expect(progress.slice(0, 3)).toEqual([1, 2, 3]);
  });

  it('reports a server that crashes during a call and restarts it on the next one', async () => {
    expect(textOf(await callThrough(gateway, 'crash.echo', { text: 'first' }))).toBe('first');
    const crashed = await callThrough(gateway, 'crash.echo', { text: 'second' });
    expect(crashed.isError).toBe(true);
    expect(textOf(crashed)).toContain("Server 'crash' closed the connection");
    expect(textOf(await callThrough(gateway, 'crash.echo', { text: 'third' }))).toBe('third');
    await gatewayStillAnswers();
  });
});
