// The far end of an in-memory linked pair, played by a test: it keeps every message it receives
// and lets the test wait for the first that matches (no sleeps).
import type { InMemoryTransport, JSONRPCMessage } from '@modelcontextprotocol/server';

/** What the peer end has received, and a wait for a message. */
export interface Peer {
  readonly received: JSONRPCMessage[];
  /** The first message received (now or later) that satisfies `match`. */
  next<T extends JSONRPCMessage = JSONRPCMessage>(match: (message: JSONRPCMessage) => boolean): Promise<T>;
}

/** Record what `end` receives (set before it starts). */
export function recordPeer(end: InMemoryTransport): Peer {
  const received: JSONRPCMessage[] = [];
  const waiting: Array<() => void> = [];
  end.onmessage = (message) => {
    received.push(message);
    waiting.splice(0).forEach((wake) => wake());
  };
  return {
    received,
    async next<T extends JSONRPCMessage>(match: (message: JSONRPCMessage) => boolean): Promise<T> {
      for (;;) {
        const found = received.find(match);
        if (found) return found as T;
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
    },
  };
}
