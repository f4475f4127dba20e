// subscriptions/listen on stdio belongs to the SDK's entry (serveStdio): it acknowledges a
// stream's filter and puts the session's change notifications on the streams that asked for them,
// but it never tells the session which resources a stream names. This decorator, between the wire
// and the entry, reads each listen request and its cancellation as they pass (it answers and drops
// nothing), and holds a downstream subscription to each resource a stream names, as
// resources/subscribe does, for as long as some open stream names it.
import type { JSONRPCMessage, MessageExtraInfo, RequestId, Transport } from '@modelcontextprotocol/server';
import { TransportDecorator } from '../shared/index.js';

/** How the session holds and lets go of one resource's updates, by the URI its client uses. */
export interface ResourceUpdates {
  hold(uri: string): void;
  release(uri: string): void;
}

/** The transport the SDK's stdio entry serves a 2026-07-28 client on. */
export class ListenSubscriptions extends TransportDecorator {
  readonly #updates: ResourceUpdates;
  /** Open listen streams (by request id) → the resources they name. */
  readonly #streams = new Map<RequestId, readonly string[]>();
  /** Resource → how many open streams name it. */
  readonly #holders = new Map<string, number>();

  constructor(inner: Transport, updates: ResourceUpdates) {
    super(inner);
    this.#updates = updates;
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message) {
      if ('id' in message && message.method === 'subscriptions/listen') this.#open(message.id, message.params);
      else if (!('id' in message) && message.method === 'notifications/cancelled') this.#close(message.params?.requestId as RequestId);
    }
    this.onmessage?.(message, extra);
  }

  // The session ends with the connection, and with it every subscription it holds.
  protected innerClosed(): void {
    this.#streams.clear();
    this.#holders.clear();
  }

  #open(id: RequestId, params: Record<string, unknown> | undefined): void {
    const named = (params?.notifications as { resourceSubscriptions?: unknown } | undefined)?.resourceSubscriptions;
    if (!Array.isArray(named) || this.#streams.has(id)) return;
    const uris = [...new Set(named.filter((uri): uri is string => typeof uri === 'string'))];
    this.#streams.set(id, uris);
    for (const uri of uris) {
      const holders = this.#holders.get(uri) ?? 0;
      this.#holders.set(uri, holders + 1);
      if (holders === 0) this.#updates.hold(uri);
    }
  }

  #close(id: RequestId | undefined): void {
    const uris = id === undefined ? undefined : this.#streams.get(id);
    if (!uris) return;
    this.#streams.delete(id!);
    for (const uri of uris) {
      const holders = this.#holders.get(uri)! - 1;
      if (holders > 0) this.#holders.set(uri, holders);
      else {
        this.#holders.delete(uri);
        this.#updates.release(uri);
      }
    }
  }
}
