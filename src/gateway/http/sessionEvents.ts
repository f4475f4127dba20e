// What a 2025 session's SSE streams sent, kept so a client whose stream broke resumes it (the
// 2025-11-25 transport, SEP-1699): given an event store, the SDK's transport opens each POST
// stream with a priming event (an id, empty data, and `retry`: when to reconnect), and answers a
// GET carrying Last-Event-ID with what came after it on that stream, the call's answer included.
// Kept in this replica's memory, per session, the last KEPT_EVENTS only: a stream is resumed on
// the replica that holds it (docs/http-and-security.md says why not through the store).
import { randomUUID } from 'node:crypto';
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

/** The `retry` a priming event gives: how long a client waits before it reconnects to a stream that ended. */
export const SSE_RETRY_MS = 1000;

// A session's events kept for resumption; an older one is forgotten (a Last-Event-ID naming it gets 400).
const KEPT_EVENTS = 256;

/** One session's SSE events, for the SDK's transport (`eventStore`). */
export class SessionEvents implements EventStore {
  // Ids are unique beyond this store: another replica's copy of the session must not take one for its own.
  readonly #prefix = randomUUID();
  #next = 0;
  // In the order stored.
  readonly #events = new Map<string, { stream: string; message: JSONRPCMessage }>();

  storeEvent(stream: string, message: JSONRPCMessage): Promise<string> {
    const id = `${this.#prefix}-${this.#next++}`;
    this.#events.set(id, { stream, message });
    if (this.#events.size > KEPT_EVENTS) this.#events.delete(this.#events.keys().next().value!);
    return Promise.resolve(id);
  }

  getStreamIdForEventId(id: string): Promise<string | undefined> {
    return Promise.resolve(this.#events.get(id)?.stream);
  }

  async replayEventsAfter(lastId: string, { send }: { send: (id: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const stream = this.#events.get(lastId)?.stream;
    if (stream === undefined) throw new Error(`No SSE event ${lastId} is kept`);
    let after = false;
    for (const [id, event] of [...this.#events]) {
      // A priming event (empty data) is no message to send again.
      if (after && event.stream === stream && 'jsonrpc' in event.message) await send(id, event.message);
      if (id === lastId) after = true;
    }
    return stream;
  }
}

/** The resumability options of a 2025 session's transport: its own event store, and the retry its priming events give. */
export function resumableStreams(): { eventStore: EventStore; retryInterval: number } {
  return { eventStore: new SessionEvents(), retryInterval: SSE_RETRY_MS };
}
