// `loadout serve` on SIGTERM drains: /healthz says draining and new requests are refused (HTTP 503
// with Retry-After and Connection: close; over stdio a JSON-RPC error with data.code DRAINING), the call under way gets
// its real answer, streams end, and the process exits 0. A call longer than --drain-seconds is
// answered with an error (data.code DRAIN_LIMIT) before the exit, not left waiting.
import { ProtocolError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { eventually, fixture, makeTempDirs, nodeServer, textOf, writeServersYaml } from '../helpers/gateway.js';
import { MCP_HEADERS, RAW_INITIALIZE, connectModernClient, useHttpHarness } from '../helpers/http.js';
import { spawnRawGateway, type RawGateway } from '../helpers/rawStdio.js';
import { usePerTest } from '../helpers/perTest.js';

// A sleep call that has begun downstream once its first progress arrived.
function sleepCall(callTool: (onprogress: () => void) => Promise<unknown>): { begun: Promise<void>; answered: Promise<unknown> } {
  let begin!: () => void;
  const begun = new Promise<void>((resolve) => (begin = resolve));
  return { begun, answered: callTool(() => begin()) };
}

describe('loadout serve --http: draining on SIGTERM', () => {
  const harness = useHttpHarness();

  async function startDraining(drainSeconds: number): Promise<void> {
    await writeServersYaml(harness().dirs.configDir, { slow: nodeServer(fixture('slow')) });
    await harness().start(['--equip', 'all', '--drain-seconds', String(drainSeconds)]);
  }

  it('answers /healthz 503 draining and new requests 503 with Retry-After, answers the call under way, ends GET and listen streams, exits 0', async () => {
    await startDraining(20);
    const { url, pid, exited } = harness().gateway;
    // A raw session with its GET notification stream open.
    const opened = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(RAW_INITIALIZE) });
    const sessionId = opened.headers.get('mcp-session-id')!;
    await opened.body?.cancel();
    const stream = await fetch(url, {
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'Mcp-Protocol-Version': '2025-06-18' },
    });
    expect(stream.status).toBe(200);
    const modern = await connectModernClient(url);
    const subscription = await modern.listen({ toolsListChanged: true });
    const client = await harness().connect();
    const call = sleepCall((onprogress) => client.client.callTool({ name: 'slow_sleep', arguments: { ms: 3000 } }, { onprogress }));
    await call.begun;
    let callDone = false;
    void call.answered.finally(() => (callDone = true));

    process.kill(pid, 'SIGTERM');
    const health = new URL('/healthz', url);
    await eventually(async () => (await fetch(health)).status === 503, 5000, '/healthz 503');
    const healthAnswer = await fetch(health);
    expect(await healthAnswer.json()).toEqual({ status: 'draining' });
    const refused = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(RAW_INITIALIZE) });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // A keep-alive client (a balancer's connection pool) is told to reconnect, so it reaches another replica.
    expect(healthAnswer.headers.get('connection')).toBe('close');
    expect(refused.headers.get('connection')).toBe('close');
    expect(((await refused.json()) as { error: { data: { code: string } } }).error.data.code).toBe('DRAINING');
    // The GET stream ends cleanly at the start (its client reconnects elsewhere), while the call goes on.
    const reader = stream.body!.getReader();
    while (!(await reader.read()).done);
    // So does the listen stream, with its complete result.
    expect(await subscription.closed).toBe('graceful');
    expect(callDone).toBe(false);
    await modern.close();

    expect(textOf(await call.answered)).toBe('slept 3000 ms');
    expect(await exited).toBe(0);
  });

  it('answers a call longer than --drain-seconds with a DRAIN_LIMIT error before it exits 0', async () => {
    await startDraining(1);
    const client = await harness().connect();
    // Its first progress, a quarter into the sleep, says it is under way downstream.
    const call = sleepCall((onprogress) => client.client.callTool({ name: 'slow_sleep', arguments: { ms: 8000 } }, { onprogress }));
    await call.begun;
    const startedAt = Date.now();
    process.kill(harness().gateway.pid, 'SIGTERM');
    const error = await call.answered.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).data).toEqual({ code: 'DRAIN_LIMIT' });
    // Cut off at the limit, long before the 6 s of sleep left.
    expect(Date.now() - startedAt).toBeLessThan(4000);
    expect(await harness().gateway.exited).toBe(0);
  });
});

describe('loadout serve over stdio: draining on SIGTERM', () => {
  const temp = usePerTest(async () => {
    const dirs = await makeTempDirs();
    return Object.assign(dirs, { close: () => dirs.cleanup() });
  });

  // A stdio gateway with a sleep of `ms` under way downstream (its first progress has arrived).
  async function sleepingGateway(drainSeconds: number, ms: number): Promise<RawGateway> {
    const dirs = temp();
    await writeServersYaml(dirs.configDir, { slow: nodeServer(fixture('slow')) });
    const gateway = spawnRawGateway(dirs, { args: ['--equip', 'all', '--drain-seconds', String(drainSeconds)] });
    gateway.send(RAW_INITIALIZE, { jsonrpc: '2.0', method: 'notifications/initialized' });
    await gateway.answer(1);
    const params = { name: 'slow_sleep', arguments: { ms }, _meta: { progressToken: 'p' } };
    gateway.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params });
    await eventually(() => gateway.messages().some((message) => message.method === 'notifications/progress'), 10_000, 'progress');
    return gateway;
  }

  it('answers the call under way with its result, refuses a new request with DRAINING, and exits 0', async () => {
    const gateway = await sleepingGateway(20, 3000);

    process.kill(gateway.pid, 'SIGTERM');
    await eventually(() => gateway.stderr().includes('draining'), 5000, 'the drain to begin');
    gateway.send({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} });
    const refused = await gateway.answer(3);
    expect((refused.error as { data?: { code?: string } } | undefined)?.data?.code).toBe('DRAINING');
    expect((await gateway.answer(2)).result).toMatchObject({ content: [{ type: 'text', text: 'slept 3000 ms' }] });
    expect(await gateway.exited).toBe(0);
  });

  it('answers a call longer than --drain-seconds with DRAIN_LIMIT before it exits 0', async () => {
    const gateway = await sleepingGateway(1, 8000);
    process.kill(gateway.pid, 'SIGTERM');
    const answer = await gateway.answer(2);
    expect((answer.error as { data?: { code?: string } } | undefined)?.data?.code).toBe('DRAIN_LIMIT');
    expect(await gateway.exited).toBe(0);
  });
});
