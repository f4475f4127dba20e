// subscriptions/listen on stdio belongs to the SDK's entry (serveStdio): it acknowledges a
// stream's filter and puts the session's change notifications on the streams that asked for them,
// but it never tells the session which resources a stream names. This decorator, between the wire
// and the entry, reads each listen request and its cancellation as they pass (it answers and drops
// nothing), and the entry's answers that end a stream, and holds a downstream subscription to each
// resource a stream names, as resources/subscribe does, for as long as some open stream names it.
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { TransportDecorator } from '../../shared/index.js';

/** How the session holds and lets go of one resource's updates, by the URI its client uses. */
export interface ResourceUpdates {
  /** Resolves once the downstream subscription is in place (or failed, which is logged). */
  hold(uri: string): Promise<void>;
  release(uri: string): void;
}

/**
 * The resources the open listen streams of one session (or one HTTP set) name: each held from the
 * first stream naming it to the close of the last. A stream is any key its caller chooses.
 */
export class ListenedResources {
  readonly #updates: ResourceUpdates;
  /** Open listen streams → the resources they name. */
  readonly #streams = new Map<unknown, readonly string[]>();
  /** Resource → how many open streams name it. */
  readonly #holders = new Map<string, number>();

  constructor(updates: ResourceUpdates) {
    this.#updates = updates;
  }

  /** A listen stream opened with `params`; resolves once the resources it names first are held. */
  open(stream: unknown, params: unknown): Promise<void> {
    const uris = resourceSubscriptionsOf(params);
    if (!uris.length || this.#streams.has(stream)) return Promise.resolve();
    this.#streams.set(stream, uris);
    const holding: Array<Promise<void>> = [];
    for (const uri of uris) {
      const holders = this.#holders.get(uri) ?? 0;
      this.#holders.set(uri, holders + 1);
      if (holders === 0) holding.push(this.#updates.hold(uri));
    }
    return Promise.all(holding).then(() => undefined);
  }

  /** The stream ended: a resource no open stream names any more is released. */
  close(stream: unknown): void {
    const uris = this.#streams.get(stream);
    if (!uris) return;
    this.#streams.delete(stream);
    for (const uri of uris) {
      const holders = this.#holders.get(uri)! - 1;
      if (holders > 0) this.#holders.set(uri, holders);
      else {
        this.#holders.delete(uri);
        this.#updates.release(uri);
      }
    }
  }

  /** Forget every stream without releasing (the session that held them is gone, and its holds with it). */
  clear(): void {
    this.#streams.clear();
    this.#holders.clear();
  }
}

// The URIs a subscriptions/listen request's filter names, each once.
function resourceSubscriptionsOf(params: unknown): readonly string[] {
  const named = (params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications?.resourceSubscriptions;
  return Array.isArray(named) ? [...new Set(named.filter((uri): uri is string => typeof uri === 'string'))] : [];
}

/** The transport the SDK's stdio entry serves a 2026-07-28 client on. */
export class ListenSubscriptions extends TransportDecorator {
  readonly #listened: ListenedResources;
  /** Open listen streams (by request id) that asked for tools list changes. */
  readonly #toolListeners = new Set<unknown>();

  constructor(inner: Transport, updates: ResourceUpdates) {
    super(inner);
    this.#listened = new ListenedResources(updates);
  }

  /** Whether an open listen stream asked for tools list changes: only then can the client hear of one. */
  get hearsToolChanges(): boolean {
    return this.#toolListeners.size > 0;
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message) {
      if ('id' in message && message.method === 'subscriptions/listen') {
        void this.#listened.open(message.id, message.params);
        if (asksToolChanges(message.params)) this.#toolListeners.add(message.id);
      } else if (!('id' in message) && message.method === 'notifications/cancelled') this.#ended(message.params?.requestId);
    }
    this.onmessage?.(message, extra);
  }

  // The entry answers a listen it refuses (an invalid filter, too many streams) with an error, and
  // ends a stream with its result: either way the stream is over, and what it named is let go.
  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('id' in message && ('result' in message || 'error' in message)) this.#ended(message.id);
    return super.send(message, options);
  }

  // The session ends with the connection, and with it every subscription it holds.
  protected innerClosed(): void {
    this.#listened.clear();
    this.#toolListeners.clear();
  }

  #ended(stream: unknown): void {
    this.#listened.close(stream);
    this.#toolListeners.delete(stream);
  }
}

function asksToolChanges(params: unknown): boolean {
  return (params as { notifications?: { toolsListChanged?: unknown } } | undefined)?.notifications?.toolsListChanged === true;
}
