// The path in front of the SDK's stdio entry on linked pairs: the test plays the client on the
// wire and the entry (it holds what the path passes on, and delivers it to the session's intake
// when the test says), with a session that forwards calls of `echo_echo`.
import { InMemoryTransport, type JSONRPCMessage, type JSONRPCRequest, type Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { recordPeer } from '../../../test/helpers/peer.js';
import { ClientIntake, DirectCalls } from '../calls/clientIntake.js';
import { ModernCallPath } from './modernCallPath.js';
import { TELEMETRY_OFF } from '../../telemetry/index.js';

const VERSION = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const SERVER_INFO = { name: 'loadout', version: '1' };

async function wire() {
  const [wireEnd, clientEnd] = InMemoryTransport.createLinkedPair();
  const [entryEnd, sessionEnd] = InMemoryTransport.createLinkedPair();
  const server = { getNegotiatedProtocolVersion: () => VERSION } as unknown as Server;
  const calls = new DirectCalls({
    server,
    services: {} as never,
    serverInfo: SERVER_INFO,
    directAnswer: (method, params) => (params?.name === 'echo_echo' ? () => Promise.resolve({ content: [] }) : undefined),
    onSendError: () => undefined,
    telemetry: TELEMETRY_OFF,
  });
  const path = new ModernCallPath(wireEnd, { directCalls: calls, server, closed: false });
  const held: JSONRPCMessage[] = [];
  path.onmessage = (message) => held.push(message);
  // The session's intake, behind the entry; what it answers goes back the entry's way.
  const intake = new ClientIntake(sessionEnd, calls.routing, calls);
  intake.onmessage = () => undefined;
  const entry = recordPeer(entryEnd);
  const client = recordPeer(clientEnd);
  await Promise.all([path.start(), clientEnd.start(), entryEnd.start(), intake.start()]);
  return {
    held,
    /** The entry delivers every message it holds to the session. */
    deliver: () => Promise.all(held.splice(0).map((message) => entryEnd.send(message))),
    send: (id: number, params: Record<string, unknown>) =>
      clientEnd.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo_echo', ...params } }),
    onWire: (id: number) => client.next((message) => 'id' in message && message.id === id),
    throughEntry: (id: number) => entry.next((message) => 'id' in message && message.id === id),
  };
}

describe('ModernCallPath', () => {
  it('takes a plain call of a forwarded tool only once the entry has delivered all it was given a request', async () => {
    const path = await wire();
    // The entry has not pinned the connection yet: the call goes its way, and the session answers it there.
    await path.send(1, { _meta: ENVELOPE });
    expect(path.held.map((message) => (message as JSONRPCRequest).id)).toEqual([1]);
    await path.deliver();
    const throughEntry = await path.throughEntry(1);

    await path.send(2, { _meta: ENVELOPE });
    expect(path.held).toEqual([]);
    const direct = await path.onWire(2);
    expect(direct).toEqual({
      result: { content: [], resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO } },
      jsonrpc: '2.0',
      id: 2,
    });
    expect(JSON.stringify({ ...direct, id: 1 })).toBe(JSON.stringify(throughEntry));
  });

  it('passes on a call that asks for more than a plain answer, names another revision, or follows a message the entry holds', async () => {
    const path = await wire();
    await path.send(1, { _meta: ENVELOPE });
    await path.deliver();
    const passed: Array<Record<string, unknown>> = [
      { _meta: { ...ENVELOPE, progressToken: 'p' } },
      { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/logLevel': 'debug' } },
      { _meta: ENVELOPE, requestState: 's', inputResponses: {} },
      { _meta: ENVELOPE, task: { ttl: 1000 } },
      { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 'c' } },
      {},
    ];
    for (const [index, params] of passed.entries()) {
      await path.deliver();
      await path.send(10 + index, params);
      expect(path.held).toHaveLength(1);
    }
    // Held behind the last of them: even a plain call waits its turn.
    await path.send(20, { _meta: ENVELOPE });
    expect(path.held).toHaveLength(2);
  });
});
