// The one door a client session's messages come in by: a Transport decorator the SDK Server
// connects through (installed before connect, so nothing is re-wired after it). A request the SDK
// would drop unanswered gets a JSON-RPC error naming what is wrong; a request the session forwards
// is answered here, straight through forward(), past the Server's per-request machinery (a schema
// parse, a handler context, response assembly: more than forwarding itself costs); everything
// else, and the cancellation of a request the Server holds, goes on to the Server.
import type {
  Server,
  TransportSendOptions,
  Transport,
  JSONRPCMessage,
  JSONRPCRequest,
  MessageExtraInfo,
  ProgressToken,
  RequestId,
} from '@modelcontextprotocol/server';
import { Cancellation, TransportDecorator, errorMessage } from '../shared/index.js';
import type { ClientRequest } from './forward.js';
import { modernRequestOfParams, type ModernServices } from './modernRequest.js';
import { requestProblem } from './requestShape.js';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';

/** Answers one request of the client (by forwarding it) and returns the result to send. */
export type DirectAnswer = (call: ClientRequest) => Promise<Record<string, unknown>>;

/** What the session supplies: which requests it answers here, and its Server. */
export interface IntakeRouting {
  /** The session's Server: it relays what a downstream asks of the client during a request. */
  readonly server: Server;
  /** What a 2026-07-28 request needs of the gateway. */
  readonly services: ModernServices;
  /** How to answer this request here, or undefined to let the Server answer it. */
  directAnswer(method: string, params: Record<string, unknown> | undefined): DirectAnswer | undefined;
  /** A failure to send an answer (the client went away), for the log. */
  onSendError(error: unknown): void;
  /** The answer to request `id` has been handed to the client's transport (written, on stdio). */
  onAnswered?(id: RequestId): void;
}

/** The Transport a session's Server connects through. */
export class ClientIntake extends TransportDecorator {
  readonly #routing: IntakeRouting;
  readonly #running = new Map<RequestId, Cancellation>();

  /** Wrap `inner` before the Server connects; handlers set on it already (the HTTP server's onclose) still run. */
  constructor(inner: Transport, routing: IntakeRouting) {
    super(inner);
    this.#routing = routing;
  }

  // The client is gone: nobody waits for the requests still running downstream.
  protected innerClosed(): void {
    for (const cancellation of this.#running.values()) cancellation.cancel('the client session ended');
    this.#running.clear();
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('id' in message) {
      const problem = requestProblem(message);
      if (problem) {
        const { id, code, message: text } = problem;
        // A null id (the id itself was unusable) is what JSON-RPC answers with; the SDK's type has no room for it.
        const answer = { jsonrpc: '2.0', id, error: { code, message: text } } as unknown as JSONRPCMessage;
        this.inner
          .send(answer, id === null ? undefined : { relatedRequestId: id })
          .catch((error: unknown) => this.#routing.onSendError(error));
        return;
      }
      if ('method' in message) {
        const answer = this.#routing.directAnswer(message.method, message.params);
        if (answer) return this.#answer(message, answer);
      }
    } else if ('method' in message && message.method === 'notifications/cancelled') {
      const requestId = message.params?.requestId as RequestId | undefined;
      const cancellation = requestId === undefined ? undefined : this.#running.get(requestId);
      if (cancellation) {
        this.#running.delete(requestId!);
        cancellation.cancel(message.params?.reason ?? 'cancelled by the client');
        return;
      }
    }
    this.onmessage?.(message, extra);
  }

  // The Server's answers go out here too: the session learns when one has been written.
  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.inner.send(message, options);
    } finally {
      if (('result' in message || 'error' in message) && message.id !== undefined) this.#routing.onAnswered?.(message.id);
    }
  }

  #answer(request: JSONRPCRequest, answer: DirectAnswer): void {
    const { id } = request;
    const cancellation = new Cancellation();
    this.#running.set(id, cancellation);
    // relatedRequestId puts every message of this request on its own response stream (HTTP).
    const send = (message: JSONRPCMessage): Promise<void> => this.inner.send(message, { relatedRequestId: id });
    // A 2026-07-28 request (its _meta names the protocol version) carries more, and its result says whether it is complete.
    const modern = modernRequestOfParams(request.params, this.#routing.services);
    const call: ClientRequest = {
      requestId: id,
      cancellation,
      progressToken: (request.params?._meta as { progressToken?: ProgressToken } | undefined)?.progressToken,
      sendNotification: (notification) => send({ jsonrpc: '2.0', ...notification }),
      server: this.#routing.server,
      modern,
    };
    const reply = (message: JSONRPCMessage): void => {
      if (this.#running.get(id) === cancellation) this.#running.delete(id);
      // A cancelled request gets no answer (as the SDK does), whatever the downstream said.
      if (!cancellation.cancelled) send(message).catch((error: unknown) => this.#routing.onSendError(error));
    };
    answer(call).then(
      (result) =>
        reply({ jsonrpc: '2.0', id, result: modern && !('resultType' in result) ? { ...result, resultType: 'complete' } : result }),
      (error: unknown) => reply({ jsonrpc: '2.0', id, error: errorOf(error) }),
    );
  }
}

// The error answer the SDK Server would send for a handler that threw `error`.
function errorOf(error: unknown): { code: number; message: string; data?: unknown } {
  const { code, data } = (error ?? {}) as { code?: unknown; data?: unknown };
  return {
    code: Number.isSafeInteger(code) ? (code as number) : ProtocolErrorCode.InternalError,
    message: errorMessage(error),
    ...(data === undefined ? {} : { data }),
  };
}
