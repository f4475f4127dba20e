import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCode, McpError, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Cancellation } from '../shared/index.js';
import { CallChannel } from './callChannel.js';

// The channel sits on one end of a linked pair in front of a stand-in for the SDK Client (which
// records what reaches it); the test plays the server on the other end, message by message.
async function wire(timeout = { timeoutMs: 1000, maxTotalMs: 5000 }) {
  const [loadoutEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  const reachedClient: JSONRPCMessage[] = [];
  let clientClosed = false;
  loadoutEnd.onmessage = (message) => reachedClient.push(message);
  loadoutEnd.onclose = () => (clientClosed = true);
  const received: JSONRPCMessage[] = [];
  const waiting: Array<() => void> = [];
  serverEnd.onmessage = (message) => {
    received.push(message);
    waiting.splice(0).forEach((wake) => wake());
  };
  await loadoutEnd.start();
  await serverEnd.start();
  const channel = new CallChannel(loadoutEnd, timeout);
  /** The next message the server end receives that satisfies `match`. */
  const nextReceived = async <T extends JSONRPCMessage>(match: (message: JSONRPCMessage) => boolean): Promise<T> => {
    for (;;) {
      const found = received.find(match);
      if (found) return found as T;
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  const nextCall = () => nextReceived<JSONRPCRequest>((message) => 'method' in message && message.method === 'tools/call');
  const nextCancel = () => nextReceived<JSONRPCRequest>((message) => 'method' in message && message.method === 'notifications/cancelled');
  return { channel, serverEnd, reachedClient, clientClosed: () => clientClosed, nextCall, nextCancel };
}

afterEach(() => vi.useRealTimers());

describe('CallChannel', () => {
  it('sends tools/call with an id the SDK Client never uses and settles with the result object unchanged', async () => {
    const { channel, serverEnd, reachedClient, nextCall } = await wire();
    const pending = channel.call('echo', { text: 'hi' });
    const request = await nextCall();
    expect(typeof request.id).toBe('string');
    expect(request.params).toEqual({ name: 'echo', arguments: { text: 'hi' } });
    const result = { content: [{ type: 'text', text: 'hi', futureField: 1 }], structuredContent: { ok: true } };
    await serverEnd.send({ jsonrpc: '2.0', id: request.id, result });
    expect(await pending).toEqual(result);
    expect(reachedClient).toEqual([]);
  });

  it('leaves every other message to the Client: its own responses, its requests, unknown progress', async () => {
    const { serverEnd, reachedClient } = await wire();
    const others: JSONRPCMessage[] = [
      { jsonrpc: '2.0', id: 0, result: {} },
      { jsonrpc: '2.0', id: 7, method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 3, progress: 1 } },
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
    ];
    for (const message of others) await serverEnd.send(message);
    expect(reachedClient).toEqual(others);
  });

  it('turns an error response into the McpError the SDK Client would throw', async () => {
    const { channel, serverEnd, nextCall } = await wire();
    const pending = channel.call('echo', {});
    const request = await nextCall();
    await serverEnd.send({ jsonrpc: '2.0', id: request.id, error: { code: ErrorCode.InvalidParams, message: 'Unknown tool: echo', data: { hint: 1 } } });
    const error = await pending.catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams, message: 'MCP error -32602: Unknown tool: echo', data: { hint: 1 } });
  });

  it('refuses a result that is not an object, saying what came', async () => {
    const { channel, serverEnd, nextCall } = await wire();
    const pending = channel.call('echo', {});
    await serverEnd.send({ jsonrpc: '2.0', id: (await nextCall()).id, result: [1, 2] as never });
    await expect(pending).rejects.toThrow('the server answered tools/call with [1,2], not a result object');
  });

  it('asks for progress with its own token, reports it, and lets it restart the timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { channel, serverEnd, nextCall } = await wire({ timeoutMs: 1000, maxTotalMs: 10_000 });
    const seen: unknown[] = [];
    const pending = channel.call('slow', undefined, { onProgress: (progress) => seen.push(progress) });
    const request = await nextCall();
    const token = (request.params as { _meta: { progressToken: string } })._meta.progressToken;
    expect(token).toBe(request.id);
    for (let step = 1; step <= 3; step++) {
      await vi.advanceTimersByTimeAsync(800);
      await serverEnd.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: step, total: 3 } });
    }
    // 2.4 s in all, never 1 s without progress: still running.
    await serverEnd.send({ jsonrpc: '2.0', id: request.id, result: { content: [] } });
    expect(await pending).toEqual({ content: [] });
    expect(seen).toEqual([1, 2, 3].map((progress) => ({ progress, total: 3 })));
  });

  it('gives up after the timeout, tells the server, and drops its late answer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { channel, serverEnd, reachedClient, nextCall, nextCancel } = await wire({ timeoutMs: 1000, maxTotalMs: 10_000 });
    const pending = channel.call('hang', {});
    const outcome = pending.catch((error: unknown) => error);
    const request = await nextCall();
    await vi.advanceTimersByTimeAsync(1000);
    expect(await outcome).toMatchObject({ code: ErrorCode.RequestTimeout });
    expect((await nextCancel()).params).toMatchObject({ requestId: request.id });
    // The late answer is not mistaken for one of the Client's.
    await serverEnd.send({ jsonrpc: '2.0', id: request.id, result: { content: [] } });
    expect(reachedClient).toHaveLength(1);
  });

  it('stops a call whose progress goes on past the total limit', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const { channel, serverEnd, nextCall, nextCancel } = await wire({ timeoutMs: 1000, maxTotalMs: 2500 });
    const outcome = channel.call('chatty', undefined, { onProgress: () => undefined }).catch((error: unknown) => error);
    const request = await nextCall();
    for (let step = 1; step <= 3; step++) {
      await vi.advanceTimersByTimeAsync(900);
      await serverEnd.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: request.id, progress: step } });
    }
    expect(await outcome).toMatchObject({ code: ErrorCode.RequestTimeout, message: expect.stringContaining('Maximum total timeout exceeded') });
    expect((await nextCancel()).params).toMatchObject({ requestId: request.id });
  });

  it('cancels with the reason given, and refuses a call already cancelled', async () => {
    const { channel, nextCall, nextCancel } = await wire();
    const cancellation = new Cancellation();
    const outcome = channel.call('wait', {}, { cancellation }).catch((error: unknown) => error);
    const request = await nextCall();
    cancellation.cancel('user pressed escape');
    expect(await outcome).toMatchObject({ message: expect.stringContaining('user pressed escape') });
    expect((await nextCancel()).params).toEqual({ requestId: request.id, reason: 'user pressed escape' });
    await expect(channel.call('wait', {}, { cancellation })).rejects.toBe('user pressed escape');
  });

  it('fails the calls in flight when the connection closes, still tells the Client, and refuses new ones', async () => {
    const { channel, serverEnd, clientClosed, nextCall } = await wire();
    const outcome = channel.call('wait', {}).catch((error: unknown) => error);
    await nextCall();
    await serverEnd.close();
    expect(await outcome).toMatchObject({ code: ErrorCode.ConnectionClosed });
    expect(clientClosed()).toBe(true);
    await expect(channel.call('echo', {})).rejects.toMatchObject({ code: ErrorCode.ConnectionClosed });
  });
});
