// Reads a stdio client's first message before anything answers it, so the gateway can tell which
// era of MCP the client opens with, then hands the transport on with that message (and any that
// came after it) delivered first. It answers nothing and drops nothing.
import type { JSONRPCMessage, MessageExtraInfo, Transport } from '@modelcontextprotocol/server';
import { TransportDecorator } from '../../shared/index.js';

/** A started transport whose messages wait, from the first one on, for whoever starts this one. */
export class StdioOpening extends TransportDecorator {
  readonly #held: Array<[JSONRPCMessage, MessageExtraInfo | undefined]> = [];
  #passing = false;
  #settleFirst: (message: JSONRPCMessage | undefined) => void = () => undefined;
  readonly #first = new Promise<JSONRPCMessage | undefined>((resolve) => {
    this.#settleFirst = resolve;
  });

  /** Wrap `inner`, not started yet. */
  constructor(inner: Transport) {
    super(inner);
  }

  /** Starts the wrapped transport; the client's first message, or undefined when it closed first. */
  async firstMessage(): Promise<JSONRPCMessage | undefined> {
    await this.inner.start();
    return this.#first;
  }

  /** The consumer (a Server, or the SDK's stdio entry) starts it: deliver what waited, then pass on. */
  override start(): Promise<void> {
    // After the consumer's start() settles: it sets onmessage before it calls start, but its own
    // setup may go on until then.
    void Promise.resolve().then(() => {
      this.#passing = true;
      for (const [message, extra] of this.#held.splice(0)) this.onmessage?.(message, extra);
    });
    return Promise.resolve();
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (this.#passing) {
      this.onmessage?.(message, extra);
      return;
    }
    this.#held.push([message, extra]);
    if (this.#held.length === 1) this.#settleFirst(message);
  }

  protected innerClosed(): void {
    this.#settleFirst(undefined);
  }
}
