// A 2026-07-28 stdio client's calls of equipped tools, taken off the wire in front of the SDK's
// stdio entry (serveStdio) and forwarded by the session at once. The entry checks the shape of
// every message each way with zod (about 60 µs of CPU per forwarded call, most of the modern era's
// extra cost); for these calls it adds nothing to the wire, since the session's intake answers
// them past the Server anyway. Only a plain call takes this path: one that carries the envelope
// of the revision the connection is pinned to, and asks for no progress, log messages, task or
// retry round; everything else, and every call until the entry has pinned the connection to the
// 2026-07-28 era, goes through the entry as before, and so does every call that arrives while a
// message passed to the entry has not reached the session yet, so calls keep their arrival order.
import type { JSONRPCMessage, MessageExtraInfo, Server, Transport } from '@modelcontextprotocol/server';
import { TransportDecorator } from '../../shared/index.js';
import type { DirectCalls } from '../calls/index.js';
import { isPlainModernCall } from '../calls/index.js';

/** What the path needs of the session the entry pins to a 2026-07-28 client. */
export interface ModernCallSession {
  readonly directCalls: DirectCalls;
  readonly server: Server;
  readonly closed: boolean;
}

/** The transport between the stdio wire and the SDK's entry, for a client that opened in 2026-07-28. */
export class ModernCallPath extends TransportDecorator {
  readonly #session: ModernCallSession;
  // The last message handed to the entry: until the session has it, the entry is still busy.
  #lastPassed: JSONRPCMessage | undefined;

  constructor(inner: Transport, session: ModernCallSession) {
    super(inner);
    this.#session = session;
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('id' in message && 'method' in message && message.method === 'tools/call' && this.#open()) {
      const version = this.#session.server.getNegotiatedProtocolVersion();
      if (isPlainModernCall(message, version) && this.#session.directCalls.take(message, this.inner)) return;
    }
    this.#lastPassed = message;
    this.onmessage?.(message, extra);
  }

  protected innerClosed(): void {}

  // The entry pinned the connection to the session and has delivered everything passed to it.
  #open(): boolean {
    return this.#session.directCalls.deliveredAll(this.#lastPassed) && !this.#session.closed;
  }
}
