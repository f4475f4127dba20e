import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { StdioOpening } from './stdioOpening.js';

/** A transport whose incoming messages the test pushes. */
function pushTransport(): Transport & { push(message: JSONRPCMessage): void; started: number } {
  const transport = {
    started: 0,
    start() {
      transport.started++;
      return Promise.resolve();
    },
    send: () => Promise.resolve(),
    close() {
      transport.onclose?.();
      return Promise.resolve();
    },
    push(message: JSONRPCMessage) {
      transport.onmessage?.(message);
    },
  } as Transport & { push(message: JSONRPCMessage): void; started: number };
  return transport;
}

const initialize: JSONRPCMessage = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
const initialized: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/initialized' };

describe('StdioOpening', () => {
  it('reads the first message, then delivers it and everything after, in order, to whoever starts it', async () => {
    const inner = pushTransport();
    const opening = new StdioOpening(inner);
    const first = opening.firstMessage();
    inner.push(initialize);
    inner.push(initialized);
    expect(await first).toEqual(initialize);
    const seen: JSONRPCMessage[] = [];
    opening.onmessage = (message) => seen.push(message);
    await opening.start();
    await Promise.resolve();
    inner.push({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(seen.map((message) => ('method' in message ? message.method : ''))).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
    ]);
    expect(inner.started).toBe(1);
  });

  it('answers undefined when the client closes before saying anything', async () => {
    const inner = pushTransport();
    const opening = new StdioOpening(inner);
    const first = opening.firstMessage();
    await inner.close();
    expect(await first).toBeUndefined();
  });
});
