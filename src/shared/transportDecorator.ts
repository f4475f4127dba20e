// The shape both of loadout's protocol decorators share (the downstream RequestLayer and the
// client-side ClientIntake): a Transport wrapping another, which an SDK Client or Server connects
// *through*, installed before connect so that nothing re-wires a transport's handlers afterwards.
import type { Transport, TransportSendOptions, JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/server';

/** A Transport that sees every incoming message first and passes on what it does not take. */
export abstract class TransportDecorator implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  /** The wrapped transport (for what only it has: an HTTP session to end, the protocol version). */
  readonly inner: Transport;

  /** Wrap `inner` (not started yet); close and error handlers already set on it still run, first. */
  constructor(inner: Transport) {
    this.inner = inner;
    const { onclose, onerror } = inner;
    inner.onmessage = (message, extra) => this.receive(message, extra);
    inner.onerror = (error) => {
      onerror?.(error);
      this.onerror?.(error);
    };
    inner.onclose = () => {
      onclose?.();
      this.innerClosed();
      this.onclose?.();
    };
  }

  /** A message from the wrapped transport: take it, or pass it on with `this.onmessage`. */
  protected abstract receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void;

  /** The wrapped transport closed; runs before the connected Client or Server hears it. */
  protected abstract innerClosed(): void;

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
