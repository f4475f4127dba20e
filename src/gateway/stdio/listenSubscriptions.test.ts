// The listen watch on one end of a linked pair: it passes every message on, and holds a resource
// while at least one open listen stream names it.
import { InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { ListenSubscriptions } from './listenSubscriptions.js';

async function wire() {
  const [gatewayEnd, clientEnd] = InMemoryTransport.createLinkedPair();
  const changes: string[] = [];
  const passed: JSONRPCMessage[] = [];
  const watch = new ListenSubscriptions(gatewayEnd, {
    hold: (uri) => (changes.push(`hold ${uri}`), Promise.resolve()),
    release: (uri) => changes.push(`release ${uri}`),
  });
  watch.onmessage = (message) => passed.push(message);
  await watch.start();
  await clientEnd.start();
  const listen = (id: string, resourceSubscriptions: string[], toolsListChanged?: boolean) =>
    clientEnd.send({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { notifications: { resourceSubscriptions, ...(toolsListChanged !== undefined && { toolsListChanged }) } },
    });
  const cancel = (requestId: string) => clientEnd.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } });
  return { changes, passed, listen, cancel, watch };
}

describe('ListenSubscriptions', () => {
  it('holds a resource from the first stream naming it to the close of the last, passing every message on', async () => {
    const { changes, passed, listen, cancel } = await wire();
    await listen('a', ['r://one', 'r://two']);
    await listen('b', ['r://two']);
    expect(changes).toEqual(['hold r://one', 'hold r://two']);
    await cancel('a');
    expect(changes).toEqual(['hold r://one', 'hold r://two', 'release r://one']);
    await cancel('b');
    await cancel('b');
    await cancel('unknown');
    expect(changes).toEqual(['hold r://one', 'hold r://two', 'release r://one', 'release r://two']);
    expect(passed).toHaveLength(6);
  });

  // The SDK's entry answers a listen it refuses (an invalid filter, too many streams) with an error,
  // and ends a stream with its result: that stream is over as much as a cancelled one.
  it('lets go of what a stream named once the entry answers it (a refusal or the end of the stream)', async () => {
    const { changes, listen, watch } = await wire();
    await listen('a', ['r://one']);
    await listen('b', ['r://two']);
    await watch.send({ jsonrpc: '2.0', id: 'a', error: { code: -32602, message: "Invalid params: 'notifications' is required" } });
    await watch.send({ jsonrpc: '2.0', id: 'b', result: { resultType: 'complete' } });
    expect(changes).toEqual(['hold r://one', 'hold r://two', 'release r://one', 'release r://two']);
  });

  it('says the client hears tool changes only while a stream that asked for them is open', async () => {
    const { listen, cancel, watch } = await wire();
    await listen('resources only', ['r://one']);
    await listen('declined', [], false);
    expect(watch.hearsToolChanges).toBe(false);
    await listen('a', [], true);
    await listen('b', [], true);
    expect(watch.hearsToolChanges).toBe(true);
    await cancel('a');
    expect(watch.hearsToolChanges).toBe(true);
    await watch.send({ jsonrpc: '2.0', id: 'b', error: { code: -32602, message: 'refused' } });
    expect(watch.hearsToolChanges).toBe(false);
    await listen('c', [], true);
    await watch.close();
    expect(watch.hearsToolChanges).toBe(false);
  });
});
