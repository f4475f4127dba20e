// The drain of `serve` over stdio (drain.ts): a Transport decorator right over the stdio wire that
// counts each client request as work until its answer is written, and answers a request that
// arrives while draining with DRAINING instead of passing it on. A listen stream is no work: it
// stays open until the process ends.
import type { JSONRPCMessage, MessageExtraInfo, RequestId, TransportSendOptions } from '@modelcontextprotocol/server';
import { TransportDecorator } from '../../shared/index.js';
import { drainingRefusal, type Drain } from '../drain.js';

// The code a refusal of the gateway's own is answered with (forward.ts answers a closed connection with it too).
const SERVER_ERROR = -32000;

/** The stdio transport as a drain sees it. */
export class DrainingTransport extends TransportDecorator {
  readonly #drain: Drain;
  readonly #open = new Map<RequestId, () => void>();

  constructor(inner: ConstructorParameters<typeof TransportDecorator>[0], drain: Drain) {
    super(inner);
    this.#drain = drain;
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message && 'id' in message) {
      if (this.#drain.draining) return this.#refuse(message.id);
      if (message.method !== 'subscriptions/listen') this.#open.set(message.id, this.#drain.begin());
    } else if ('method' in message && message.method === 'notifications/cancelled') {
      // A cancelled request gets no answer: it is no longer waited for.
      this.#end(message.params?.requestId as RequestId | undefined);
    }
    this.onmessage?.(message, extra);
  }

  protected innerClosed(): void {
    for (const end of this.#open.values()) end();
    this.#open.clear();
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.inner.send(message, options);
    } finally {
      if ('result' in message || 'error' in message) this.#end(message.id);
    }
  }

  #end(id: RequestId | undefined): void {
    const end = id === undefined ? undefined : this.#open.get(id);
    if (!end) return;
    this.#open.delete(id!);
    end();
  }

  #refuse(id: RequestId): void {
    const { code, message } = drainingRefusal();
    const answer: JSONRPCMessage = { jsonrpc: '2.0', id, error: { code: SERVER_ERROR, message, data: { code } } };
    this.inner.send(answer).catch((error: unknown) => this.onerror?.(error as Error));
  }
}
