import { InMemoryTransport, ProtocolError, ProtocolErrorCode, SdkErrorCode } from '@modelcontextprotocol/server';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Cancellation } from '../shared/index.js';
import { recordPeer } from '../../test/helpers/peer.js';
import { RequestLayer } from './requestLayer.js';

// The layer wraps one end of a linked pair, with a stand-in for the SDK Client connected through
// it (recording what reaches it); the test plays the server on the other end, message by message.
async function wire(timeoutMs = 1000) {
  const [loadoutEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  const reachedClient: JSONRPCMessage[] = [];
  const notified: JSONRPCMessage[] = [];
  let clientClosed = false;
  const channel = new RequestLayer(loadoutEnd, timeoutMs, { onNotification: (notification) => notified.push(notification) });
  channel.onmessage = (message) => reachedClient.push(message);
  channel.onclose = () => (clientClosed = true);
  const server = recordPeer(serverEnd);
  await channel.start();
  await serverEnd.start();
  const nextReceived = <T extends JSONRPCMessage>(match: (message: JSONRPCMessage) => boolean): Promise<T> => server.next<T>(match);
  const nextCall = () => nextReceived<JSONRPCRequest>((message) => 'method' in message && message.method === 'tools/call');
  const nextCancel = () => nextReceived<JSONRPCRequest>((message) => 'method' in message && message.method === 'notifications/cancelled');
  return { channel, serverEnd, reachedClient, notified, clientClosed: () => clientClosed, nextReceived, nextCall, nextCancel };
}

afterEach(() => vi.useRealTimers());

const fakeTimers = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });

describe('RequestLayer', () => {
  it('sends any method with an id the SDK Client never uses and settles with the result object unchanged', async () => {
    const { channel, serverEnd, reachedClient, nextReceived } = await wire();
    const pending = channel.request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    const request = await nextReceived<JSONRPCRequest>((message) => 'method' in message && message.method === 'tools/call');
    expect(typeof request.id).toBe('string');
    expect(request.params).toEqual({ name: 'echo', arguments: { text: 'hi' } });
    const result = { content: [{ type: 'text', text: 'hi', futureField: 1 }], structuredContent: { ok: true } };
    await serverEnd.send({ jsonrpc: '2.0', id: request.id, result });
    expect(await pending).toEqual(result);
    expect(reachedClient).toEqual([]);

    const listed = channel.request('prompts/list', undefined);
    const list = await nextReceived<JSONRPCRequest>((message) => 'method' in message && message.method === 'prompts/list');
    expect(list.id).not.toBe(request.id);
    expect('params' in list).toBe(false);
    await serverEnd.send({ jsonrpc: '2.0', id: list.id, result: { prompts: [] } });
    expect(await listed).toEqual({ prompts: [] });
  });

  it('passes every other message to the Client, and reports every notification but its own progress', async () => {
    const { serverEnd, reachedClient, notified } = await wire();
    const others: JSONRPCMessage[] = [
      { jsonrpc: '2.0', id: 0, result: {} },
      { jsonrpc: '2.0', id: 'L99', result: {} },
      { jsonrpc: '2.0', id: 7, method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 3, progress: 1 } },
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ];
    for (const message of others) await serverEnd.send(message);
    expect(reachedClient).toEqual(others);
    expect(notified).toEqual(others.slice(3));
  });

  it('turns an error response into the ProtocolError the SDK Client would throw', async () => {
    const { channel, serverEnd, nextCall } = await wire();
    const pending = channel.request('tools/call', { name: 'echo' });
    const request = await nextCall();
    await serverEnd.send({
      jsonrpc: '2.0',
      id: request.id,
      error: { code: ProtocolErrorCode.InvalidParams, message: 'Unknown tool: echo', data: { hint: 1 } },
    });
    const error = await pending.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({
      code: ProtocolErrorCode.InvalidParams,
      message: 'Unknown tool: echo',
      data: { hint: 1 },
    });
  });

  it('refuses a result that is not an object, saying what came', async () => {
    const { channel, serverEnd, nextCall } = await wire();
    const pending = channel.request('tools/call', { name: 'echo' });
    await serverEnd.send({ jsonrpc: '2.0', id: (await nextCall()).id, result: [1, 2] as never });
    await expect(pending).rejects.toThrow('the server answered tools/call with [1,2], not a result object');
  });

  it("asks for progress with its own token in place of the caller's, reports it, and lets it restart the timeout", async () => {
    fakeTimers();
    const { channel, serverEnd, nextCall } = await wire(1000);
    const seen: unknown[] = [];
    const params = { name: 'slow', _meta: { progressToken: 'the-clients', traceparent: 't' } };
    const pending = channel.request('tools/call', params, { onProgress: (progress) => seen.push(progress) });
    const request = await nextCall();
    expect(request.params).toEqual({ name: 'slow', _meta: { progressToken: request.id, traceparent: 't' } });
    expect(params._meta.progressToken).toBe('the-clients');
    for (let step = 1; step <= 3; step++) {
      await vi.advanceTimersByTimeAsync(800);
      await serverEnd.send({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: request.id, progress: step, total: 3 },
      });
    }
    // 2.4 s in all, never 1 s without progress: still running.
    await serverEnd.send({ jsonrpc: '2.0', id: request.id, result: { content: [] } });
    expect(await pending).toEqual({ content: [] });
    expect(seen).toEqual([1, 2, 3].map((progress) => ({ progress, total: 3 })));
  });

  it("drops the caller's progress token when nobody listens for progress", async () => {
    const { channel, nextCall } = await wire();
    void channel.request('tools/call', { name: 'x', _meta: { progressToken: 5 } }).catch(() => undefined);
    expect((await nextCall()).params).toEqual({ name: 'x' });
  });

  it('gives up after the timeout (its own, if given), tells the server, and drops its late answer', async () => {
    fakeTimers();
    const { channel, serverEnd, reachedClient, nextCall, nextCancel } = await wire(60_000);
    const outcome = channel.request('tools/call', { name: 'hang' }, { timeoutMs: 1000 }).catch((error: unknown) => error);
    const request = await nextCall();
    await vi.advanceTimersByTimeAsync(1000);
    expect(await outcome).toMatchObject({ code: SdkErrorCode.RequestTimeout, data: { timeout: 1000 } });
    expect((await nextCancel()).params).toMatchObject({ requestId: request.id });
    // The late answer is not mistaken for one of the Client's... but it is not ours any more either.
    await serverEnd.send({ jsonrpc: '2.0', id: request.id, result: { content: [] } });
    expect(reachedClient).toHaveLength(1);
  });

  it('times out each request at its own deadline, a shorter one sent after a longer one too, and after its last progress', async () => {
    fakeTimers();
    const { channel, serverEnd, nextCall } = await wire(60_000);
    const timedOutAt = (outcome: Promise<unknown>) =>
      outcome.then(
        () => 'answered',
        () => performance.now(),
      );
    const long = timedOutAt(channel.request('tools/call', { name: 'long' }, { timeoutMs: 5000, onProgress: () => undefined }));
    const longRequest = await nextCall();
    const short = timedOutAt(channel.request('tools/call', { name: 'short' }, { timeoutMs: 1000 }));
    await nextCall();
    await vi.advanceTimersByTimeAsync(1000);
    expect(await short).toBe(1000);
    await vi.advanceTimersByTimeAsync(3000);
    await serverEnd.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: longRequest.id, progress: 1 } });
    await vi.advanceTimersByTimeAsync(5000);
    expect(await long).toBe(9000);
  });

  it('waits out a timeout longer than a Node timer can hold (~24.8 days) instead of giving up at once', async () => {
    fakeTimers();
    // Node fires a timer set past 2^31-1 ms after 1 ms (the fake clock does not), which would spin.
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const { channel, serverEnd, nextCall } = await wire(40 * 24 * 3_600_000);
    let settled = false;
    const pending = channel.request('tools/call', { name: 'patient' }).finally(() => (settled = true));
    const request = await nextCall();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(settled).toBe(false);
    expect(vi.getTimerCount()).toBe(1);
    expect(Math.max(...setTimeoutSpy.mock.calls.map(([, delayMs]) => delayMs ?? 0))).toBeLessThanOrEqual(2 ** 31 - 1);
    await serverEnd.send({ jsonrpc: '2.0', id: request.id, result: { content: [] } });
    expect(await pending).toEqual({ content: [] });
  });

  it('stops a request whose progress goes on past ten timeouts in all', async () => {
    fakeTimers();
    const { channel, serverEnd, nextCall, nextCancel } = await wire(1000);
    const outcome = channel.request('tools/call', { name: 'chatty' }, { onProgress: () => undefined }).catch((error: unknown) => error);
    const request = await nextCall();
    for (let step = 1; step <= 12; step++) {
      await vi.advanceTimersByTimeAsync(900);
      await serverEnd.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: request.id, progress: step } });
    }
    expect(await outcome).toMatchObject({
      code: SdkErrorCode.RequestTimeout,
      message: expect.stringContaining('Maximum total timeout exceeded'),
    });
    expect((await nextCancel()).params).toMatchObject({ requestId: request.id });
  });

  it('cancels with the reason given, and refuses a request already cancelled', async () => {
    const { channel, nextCall, nextCancel } = await wire();
    const cancellation = new Cancellation();
    const outcome = channel.request('tools/call', { name: 'wait' }, { cancellation }).catch((error: unknown) => error);
    const request = await nextCall();
    cancellation.cancel('user pressed escape');
    expect(await outcome).toMatchObject({ message: 'user pressed escape' });
    expect((await nextCancel()).params).toEqual({ requestId: request.id, reason: 'user pressed escape' });
    await expect(channel.request('tools/call', { name: 'wait' }, { cancellation })).rejects.toThrow('user pressed escape');
  });

  it('fails the requests in flight when the connection closes, still tells the Client, and refuses new ones', async () => {
    const { channel, serverEnd, clientClosed, nextCall } = await wire();
    const outcome = channel.request('tools/call', { name: 'wait' }).catch((error: unknown) => error);
    await nextCall();
    await serverEnd.close();
    expect(await outcome).toMatchObject({ code: SdkErrorCode.ConnectionClosed });
    expect(clientClosed()).toBe(true);
    await expect(channel.request('ping', undefined)).rejects.toMatchObject({ code: SdkErrorCode.ConnectionClosed });
  });

  describe('to a modern server', () => {
    const envelope = {
      fixed: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
      defaults: { 'io.modelcontextprotocol/logLevel': 'info' },
    };

    it("adds the envelope to each request and cancellation, beside the caller's _meta, whose log level wins", async () => {
      const { channel, nextCall, nextCancel } = await wire();
      channel.setEnvelope(envelope);
      const cancellation = new Cancellation();
      const meta = { 'io.modelcontextprotocol/protocolVersion': 'forged', 'io.modelcontextprotocol/logLevel': 'debug', trace: 'x' };
      const outcome = channel
        .request('tools/call', { name: 'wait', _meta: meta }, { cancellation, onProgress: () => undefined })
        .catch((error: unknown) => error);
      const request = await nextCall();
      expect(request.params).toEqual({
        name: 'wait',
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/logLevel': 'debug',
          trace: 'x',
          progressToken: request.id,
        },
      });
      cancellation.cancel('stop');
      await outcome;
      expect((await nextCancel()).params).toEqual({
        requestId: request.id,
        reason: 'stop',
        _meta: { ...envelope.defaults, ...envelope.fixed },
      });
    });

    it('takes resultType complete off a result and leaves any other type for the connection', async () => {
      const { channel, serverEnd, nextReceived } = await wire();
      const nextCall = (name: string) =>
        nextReceived<JSONRPCRequest>((message) => 'method' in message && message.method === 'tools/call' && message.params?.name === name);
      channel.setEnvelope(envelope);
      const complete = channel.request('tools/call', { name: 'echo' });
      await serverEnd.send({ jsonrpc: '2.0', id: (await nextCall('echo')).id, result: { resultType: 'complete', content: [] } });
      expect(await complete).toEqual({ content: [] });
      const asking = channel.request('tools/call', { name: 'ask' });
      const wanting = { resultType: 'input_required', inputRequests: {}, requestState: 's' };
      await serverEnd.send({ jsonrpc: '2.0', id: (await nextCall('ask')).id, result: wanting });
      expect(await asking).toEqual(wanting);
    });
  });
});
