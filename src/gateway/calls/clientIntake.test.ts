// The client-side intake on one end of a linked pair, with a stand-in for the SDK Server connected
// through it (recording what reaches it); the test plays the client, message by message.
import { Server, InMemoryTransport, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { ClientIntake, type DirectAnswer } from './clientIntake.js';
import { recordPeer } from '../../../test/helpers/peer.js';
import type { ClientRequest } from './forward.js';
import { TELEMETRY_OFF } from '../../telemetry/index.js';

async function wire(answerFor: (method: string) => DirectAnswer | undefined) {
  const [gatewayEnd, clientEnd] = InMemoryTransport.createLinkedPair();
  const reachedServer: JSONRPCMessage[] = [];
  let serverClosed = false;
  const intake = new ClientIntake(gatewayEnd, {
    server: new Server({ name: 't', version: '1' }),
    // 2025-era requests only, of the local caller: a modern request would need the gateway's services.
    services: {} as never,
    serverInfo: { name: 't', version: '1' },
    directAnswer: answerFor,
    onSendError: () => undefined,
    telemetry: TELEMETRY_OFF,
  });
  intake.onmessage = (message) => reachedServer.push(message);
  intake.onclose = () => (serverClosed = true);
  const client = recordPeer(clientEnd);
  await intake.start();
  await clientEnd.start();
  const answerTo = (id: string | number | null): Promise<JSONRPCMessage> => client.next((message) => 'id' in message && message.id === id);
  return { clientEnd, reachedServer, received: client.received, answerTo, serverClosed: () => serverClosed };
}

describe('ClientIntake', () => {
  it('answers a malformed request itself, naming the field, and passes well-formed ones, notifications and responses on', async () => {
    const { clientEnd, reachedServer, received, answerTo } = await wire(() => undefined);
    await clientEnd.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: [] } as never);
    await clientEnd.send({ jsonrpc: '2.0', id: 2, method: 'ping', stray: 1 } as never);
    expect(await answerTo(1)).toMatchObject({
      error: { code: ProtocolErrorCode.InvalidParams, message: 'Invalid tools/list request: params must be an object' },
    });
    expect(await answerTo(2)).toMatchObject({
      error: { code: ProtocolErrorCode.InvalidRequest, message: expect.stringContaining("unknown field 'stray'") },
    });
    const passed: JSONRPCMessage[] = [
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 4, result: {} },
    ];
    for (const message of passed) await clientEnd.send(message);
    expect(reachedServer).toEqual(passed);
    expect(received).toHaveLength(2);
  });

  it('answers a request the session takes under its id, with progress under the client token', async () => {
    const direct: DirectAnswer = async (call) => {
      await call.sendNotification({ method: 'notifications/progress', params: { progressToken: call.progressToken!, progress: 1 } });
      return { content: [{ type: 'text', text: 'forwarded' }] };
    };
    const { clientEnd, reachedServer, received, answerTo } = await wire((method) => (method === 'tools/call' ? direct : undefined));
    await clientEnd.send({ jsonrpc: '2.0', id: 'c1', method: 'tools/call', params: { name: 'x', _meta: { progressToken: 'tok' } } });
    expect(await answerTo('c1')).toEqual({ jsonrpc: '2.0', id: 'c1', result: { content: [{ type: 'text', text: 'forwarded' }] } });
    expect(received[0]).toEqual({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 1 } });
    expect(reachedServer).toEqual([]);
  });

  it('cancels a request it took when the client cancels it, and sends no answer; the client closing cancels the rest', async () => {
    const calls: ClientRequest[] = [];
    const never: DirectAnswer = (call) => {
      calls.push(call);
      return new Promise((resolve) => call.cancellation.onCancel(() => resolve({ late: true })));
    };
    const { clientEnd, reachedServer, received, serverClosed } = await wire(() => never);
    await clientEnd.send({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'x' } });
    await clientEnd.send({ jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'x' } });
    await clientEnd.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a', reason: 'escape' } });
    expect(calls[0]!.cancellation.reason).toBe('escape');
    expect(calls[1]!.cancellation.cancelled).toBe(false);
    // A cancellation of a request the Server holds goes to the Server.
    await clientEnd.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'other' } });
    expect(reachedServer).toHaveLength(1);
    await clientEnd.close();
    expect(calls[1]!.cancellation.reason).toBe('the client session ended');
    expect(serverClosed()).toBe(true);
    expect(received).toEqual([]);
  });
});
