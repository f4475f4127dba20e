// Test helper: every notification a client receives that no other handler took, with a wait
// for the first one matching a predicate (a deadline, never a fixed sleep).
import type { Client, JSONRPCMessage, Transport } from '@modelcontextprotocol/client';

/** A received notification. */
export interface ReceivedNotification {
  method: string;
  params?: Record<string, unknown>;
}

/** Collects a client's notifications from now on. */
export interface NotificationLog {
  readonly all: readonly ReceivedNotification[];
  /** Those with `method`. */
  of(method: string): ReceivedNotification[];
  /** Resolves with the first notification (received before or after the call) matching `match`. */
  waitFor(match: (notification: ReceivedNotification) => boolean, timeoutMs?: number, what?: string): Promise<ReceivedNotification>;
}

/** Start collecting `client`'s notifications (through its fallback handler). */
export function collectNotifications(client: Client): NotificationLog {
  const all: ReceivedNotification[] = [];
  const waiters = new Set<() => void>();
  client.fallbackNotificationHandler = (notification) => {
    all.push(notification);
    for (const wake of waiters) wake();
    return Promise.resolve();
  };
  return {
    all,
    of: (method) => all.filter((notification) => notification.method === method),
    async waitFor(match, timeoutMs = 10_000, what = 'a matching notification') {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = all.find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}; received: ${all.map((n) => n.method).join(', ') || 'nothing'}`);
        await new Promise<void>((resolve) => {
          const wake = (): void => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, 100);
          waiters.add(wake);
        });
      }
    },
  };
}

/**
 * Every message the client's transport hands the client from now on, in order (call after
 * connect). Read here, not through the Client: the v2 Client hands a notification on a tick after
 * it reads it, so under load it drops progress read in the same chunk as the result.
 */
export function tapReceived(transport: Transport): readonly JSONRPCMessage[] {
  const received: JSONRPCMessage[] = [];
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('tapReceived: connect the client first');
  transport.onmessage = (message, extra) => {
    received.push(message);
    deliver(message, extra);
  };
  return received;
}

/** The progress values received before the result whose text is `resultText` (which must have come). */
export function progressBeforeResult(received: readonly JSONRPCMessage[], resultText: string): unknown[] {
  const answer = received.findIndex(
    (message) => 'result' in message && JSON.stringify(message.result).includes(JSON.stringify(resultText)),
  );
  if (answer < 0) throw new Error(`no result with the text ${resultText} was received`);
  return received
    .slice(0, answer)
    .flatMap((message) => ('method' in message && message.method === 'notifications/progress' ? [message.params?.progress] : []));
}
