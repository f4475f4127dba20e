// The one door a client session's messages come in by: a Transport decorator the SDK Server
// connects through (installed before connect, so nothing is re-wired after it). A request the SDK
// would drop unanswered gets a JSON-RPC error naming what is wrong; a request the session forwards
// is answered here, straight through forward(), past the Server's per-request machinery (a schema
// parse, a handler context, response assembly: more than forwarding itself costs), with the same
// bytes the Server would write; everything else, and the cancellation of a request the Server
// holds, goes on to the Server.
import type {
  Implementation,
  Server,
  TransportSendOptions,
  Transport,
  JSONRPCMessage,
  JSONRPCRequest,
  MessageExtraInfo,
  ProgressToken,
  RequestId,
} from '@modelcontextprotocol/server';
import { Cancellation, TransportDecorator, errorMessage, modernCallResult } from '../../shared/index.js';
import type { ClientRequest } from './forward.js';
import { modernRequestOfParams, type ModernServices } from './modernRequest.js';
import { requestProblem } from './requestShape.js';
import type { Telemetry } from '../../telemetry/index.js';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';

// The code the SDK Server never answers with (see errorOf).
const RETIRED_NOT_FOUND = -32002;

/** Answers one request of the client (by forwarding it) and returns the result to send. */
export type DirectAnswer = (call: ClientRequest) => Promise<Record<string, unknown>>;

/** What the session supplies: which requests it answers here, and its Server. */
export interface IntakeRouting {
  /** The session's Server: it relays what a downstream asks of the client during a request. */
  readonly server: Server;
  /** What a 2026-07-28 request needs of the gateway. */
  readonly services: ModernServices;
  /** The Server's identity, which a 2026-07-28 result names in its _meta. */
  readonly serverInfo: Implementation;
  /** How to answer this request here, or undefined to let the Server answer it. */
  directAnswer(method: string, params: Record<string, unknown> | undefined): DirectAnswer | undefined;
  /** A failure to send an answer (the client went away), for the log. */
  onSendError(error: unknown): void;
  /** The answer to request `id` has been handed to the client's transport (written, on stdio). */
  onAnswered?(id: RequestId): void;
  /** The gateway's telemetry: a request's trace context, carried to what it sends downstream. */
  readonly telemetry: Telemetry;
}

/**
 * The calls a session answers itself, by forwarding them, wherever they come in: through its
 * intake, or (2026-07-28 stdio, modernCallPath.ts) straight off the wire in front of the SDK's entry.
 * One per session, so a cancellation finds its call whichever way it came.
 */
export class DirectCalls {
  readonly routing: IntakeRouting;
  readonly #running = new Map<RequestId, Cancellation>();
  // What the session's intake has been delivered, for a way in ahead of it (see deliveredAll).
  #lastDelivered: JSONRPCMessage | undefined;
  #servesRequests = false;

  constructor(routing: IntakeRouting) {
    this.routing = routing;
  }

  /**
   * Whether the session's intake has been delivered a request other than server/discover (an SDK
   * entry in front of it has pinned the connection to it: a probe delivers nothing else), and
   * `passed` last of all: every message passed to that entry has reached the session (ModernCallPath).
   */
  deliveredAll(passed: JSONRPCMessage | undefined): boolean {
    return this.#servesRequests && this.#lastDelivered === passed;
  }

  /** The intake records each message that reaches it, before anything else (see deliveredAll). */
  delivered(message: JSONRPCMessage): void {
    this.#lastDelivered = message;
    if ('method' in message && 'id' in message && message.method !== 'server/discover') this.#servesRequests = true;
  }

  /** Answer `request` on `transport` if the session forwards it; false to let its Server answer it. */
  take(request: JSONRPCRequest, transport: Transport): boolean {
    const answer = this.routing.directAnswer(request.method, request.params);
    if (!answer) return false;
    this.#answer(request, answer, transport);
    return true;
  }

  /** Cancel the call answered here under `requestId`; false when none runs. */
  cancel(requestId: RequestId | undefined, reason: unknown): boolean {
    const cancellation = requestId === undefined ? undefined : this.#running.get(requestId);
    if (!cancellation) return false;
    this.#running.delete(requestId!);
    cancellation.cancel(reason ?? 'cancelled by the client');
    return true;
  }

  /** The client is gone: nobody waits for the calls still running downstream. */
  cancelAll(): void {
    for (const cancellation of this.#running.values()) cancellation.cancel('the client session ended');
    this.#running.clear();
  }

  #answer(request: JSONRPCRequest, answer: DirectAnswer, transport: Transport): void {
    const { id } = request;
    const cancellation = new Cancellation();
    this.#running.set(id, cancellation);
    // relatedRequestId puts every message of this request on its own response stream (HTTP).
    const send = (message: JSONRPCMessage): Promise<void> => transport.send(message, { relatedRequestId: id });
    // A 2026-07-28 request (its _meta names the protocol version) carries more, and its result says whether it is complete.
    const modern = modernRequestOfParams(request.params, this.routing.services);
    const call: ClientRequest = {
      requestId: id,
      cancellation,
      progressToken: (request.params?._meta as { progressToken?: ProgressToken } | undefined)?.progressToken,
      sendNotification: (notification) => send({ jsonrpc: '2.0', ...notification }),
      server: this.routing.server,
      modern,
      principal: this.routing.services.principal?.id,
      trace: this.routing.telemetry.requestTrace(request),
    };
    const reply = (message: JSONRPCMessage): void => {
      if (this.#running.get(id) === cancellation) this.#running.delete(id);
      // A cancelled request gets no answer (as the SDK does), whatever the downstream said.
      if (!cancellation.cancelled) send(message).catch((error: unknown) => this.routing.onSendError(error));
    };
    answer(call).then(
      (result) => reply({ result: modern ? modernCallResult(result, this.routing.serverInfo) : result, jsonrpc: '2.0', id }),
      (error: unknown) => reply({ jsonrpc: '2.0', id, error: errorOf(error) }),
    );
  }
}

/** The Transport a session's Server connects through. */
export class ClientIntake extends TransportDecorator {
  readonly #calls: DirectCalls;

  /**
   * Wrap `inner` before the Server connects; handlers set on it already (the HTTP server's onclose)
   * still run. `calls`: the session's, when its calls may also come in another way.
   */
  constructor(inner: Transport, routing: IntakeRouting, calls = new DirectCalls(routing)) {
    super(inner);
    this.#calls = calls;
  }

  protected innerClosed(): void {
    this.#calls.cancelAll();
  }

  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    this.#calls.delivered(message);
    if ('id' in message) {
      const problem = requestProblem(message);
      if (problem) {
        const { id, code, message: text } = problem;
        // A null id (the id itself was unusable) is what JSON-RPC answers with; the SDK's type has no room for it.
        const answer = { jsonrpc: '2.0', id, error: { code, message: text } } as unknown as JSONRPCMessage;
        this.inner
          .send(answer, id === null ? undefined : { relatedRequestId: id })
          .catch((error: unknown) => this.#calls.routing.onSendError(error));
        return;
      }
      if ('method' in message && this.#calls.take(message, this.inner)) return;
    } else if ('method' in message && message.method === 'notifications/cancelled') {
      if (this.#calls.cancel(message.params?.requestId as RequestId | undefined, message.params?.reason)) return;
    }
    // A request the Server answers (which the SDK's stdio entry may deliver from its queue) is handled
    // in the trace context it arrived in; a call taken above carries its context by hand.
    const { telemetry } = this.#calls.routing;
    if (telemetry.tracing) telemetry.resume(message, () => this.onmessage?.(message, extra));
    else this.onmessage?.(message, extra);
  }

  // The Server's answers go out here too: the session learns when one has been written.
  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.inner.send(message, options);
    } finally {
      if (('result' in message || 'error' in message) && message.id !== undefined) this.#calls.routing.onAnswered?.(message.id);
    }
  }
}

// The error answer the SDK Server would send for a handler that threw `error` (it answers the
// retired -32002, resource not found, as -32602).
function errorOf(error: unknown): { code: number; message: string; data?: unknown } {
  const { code, data } = (error ?? {}) as { code?: unknown; data?: unknown };
  const thrown = Number.isSafeInteger(code) ? (code as number) : ProtocolErrorCode.InternalError;
  return {
    code: thrown === RETIRED_NOT_FOUND ? ProtocolErrorCode.InvalidParams : thrown,
    message: errorMessage(error),
    ...(data === undefined ? {} : { data }),
  };
}
