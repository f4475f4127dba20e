// Every request loadout makes of one downstream server (tools, prompts, resources, completions,
// ping…) goes through this Transport decorator, and the SDK Client connects through it too: the
// Client keeps the handshake and answering the server's own requests (sampling, elicitation).
// Timeout, progress, cancellation and the error of a failure are written here, once. Results
// pass back unchanged: a gateway forwards them, so a schema parse per request is cost without use.
// To a modern (2026-07-28) server every request and cancellation carries the `_meta` envelope,
// and a complete result loses its `resultType`, so it reads as a 2025 server's would.
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, ProtocolErrorCode, SdkErrorCode, SdkError } from '@modelcontextprotocol/server';
import type { ClientCapabilities, Transport, JSONRPCMessage, JSONRPCNotification, MessageExtraInfo } from '@modelcontextprotocol/server';
import { MAX_TIMER_MS, TransportDecorator, type Cancellation } from '../shared/index.js';
import type { RequestTrace, TracedSendOptions } from '../telemetry/index.js';
import type { DownstreamCaller } from './inFlightCallers.js';

/** A progress notification's fields, as the downstream sent them (without its token). */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options of one downstream request. */
export interface RequestOptions {
  cancellation?: Cancellation;
  /** Called with each progress notification the server sends for this request. */
  onProgress?: (progress: Progress) => void;
  /** Who answers the sampling/elicitation (and a modern server's roots) requests made during this request. */
  caller?: DownstreamCaller;
  /** Time allowed without an answer (progress restarts it); default: the server's timeout_seconds. */
  timeoutMs?: number;
  /**
   * What a modern server is told the client behind this request declared, of what loadout relays
   * (sampling, elicitation, roots); without it, loadout's own capabilities. A 2026-07-28 client's
   * declaration narrows them, since a server must not rely on a capability the client behind loadout
   * lacks; a 2025 client's roots are added to them, since roots are never loadout's own.
   */
  clientCapabilities?: ClientCapabilities;
  /** Whose credentials a request to a `credentials: per-user` server goes with (a principal's id); the pool routes by it. */
  principal?: string;
  /** The trace context of the client request this one is made for (telemetry's CLIENT span is its child). */
  trace?: RequestTrace | undefined;
  /** HTTP headers of a modern server's request (a call's `Mcp-Param-*`, SEP-2243); a 2025 request goes without them. */
  headers?: Record<string, string>;
}

/**
 * The `_meta` envelope of a modern server's requests: `fixed` keys (protocol version, client info
 * and capabilities) replace the caller's; `defaults` (a log level) give way to the caller's own.
 */
export interface Envelope {
  fixed: Record<string, unknown>;
  defaults?: Record<string, unknown>;
}

/** What the layer reports besides answers. */
export interface RequestLayerHooks {
  /** Every notification from the server except progress of one of this layer's requests. */
  onNotification?: (notification: JSONRPCNotification) => void;
}

// A request reporting progress may run longer than one timeout, but not without end.
const MAX_TOTAL_TIMEOUTS = 10;

// The SDK Client numbers its requests 0, 1, 2…; string ids can never collide with them.
const ID_PREFIX = 'L';

interface PendingRequest {
  readonly method: string;
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (error: unknown) => void;
  readonly onProgress: RequestOptions['onProgress'];
  readonly timeoutMs: number;
  /** When it times out (performance.now() time); progress moves it on. */
  deadline: number;
  readonly startedAt: number;
  readonly stopListening: (() => void) | undefined;
  /** Ends the request's own HTTP stream: how a request is cancelled on modern streamable HTTP. */
  readonly stream: AbortController | undefined;
}

/** The Transport a Client connects through, and the requests loadout makes on it. */
export class RequestLayer extends TransportDecorator {
  readonly #defaultTimeoutMs: number;
  readonly #hooks: RequestLayerHooks;
  readonly #pending = new Map<string, PendingRequest>();
  // One timer for every request, set for the earliest deadline and moved on when it fires: a timer
  // per request (set, then cleared by nearly every answer) cost more than the rest of the layer.
  #deadlineTimer: NodeJS.Timeout | undefined;
  #deadlineTimerAt = Infinity;
  #nextId = 0;
  #closed = false;
  #envelope: Envelope | undefined;
  // The `_meta` of a request that brings none of its own and no client capabilities to relay (nearly
  // every forwarded call): made once per envelope, frozen, since every such request shares it.
  #plainMeta: Readonly<Record<string, unknown>> | undefined;
  // Whether the inner transport gives each request its own stream (modern streamable HTTP); fixed per transport.
  readonly #perRequestStream: boolean;

  /** Wrap `inner` (not started yet); requests wait `defaultTimeoutMs` for an answer unless told otherwise. */
  constructor(inner: Transport, defaultTimeoutMs: number, hooks: RequestLayerHooks = {}) {
    super(inner);
    this.#defaultTimeoutMs = defaultTimeoutMs;
    this.#hooks = hooks;
    this.#perRequestStream = (inner as { hasPerRequestStream?: boolean }).hasPerRequestStream === true;
    // The SDK tells a stdio transport (whose silence on its era probe means a legacy server) from
    // an HTTP one (where it means an outage) by these two properties: a stdio child's show through.
    if ('stderr' in inner && 'pid' in inner) {
      Object.defineProperties(this, {
        stderr: { get: () => inner.stderr },
        pid: { get: () => inner.pid },
      });
    }
  }

  /** Speak to a modern server from now on: `envelope` goes on every request; undefined for a legacy one. */
  setEnvelope(envelope: Envelope | undefined): void {
    this.#envelope = envelope;
    this.#plainMeta = envelope && Object.freeze(envelopeMeta(envelope, undefined, { [CLIENT_CAPABILITIES_META_KEY]: {} }));
  }

  protected innerClosed(): void {
    this.#closed = true;
    clearTimeout(this.#deadlineTimer);
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
  }

  /** Give up on every request under way: the server is told of each (notifications/cancelled), and each caller gets `reason`. */
  cancelAll(reason: Error): void {
    for (const id of [...this.#pending.keys()]) this.#cancel(id, reason);
  }

  /** Send `method` with `params` and settle with the server's result object, unchanged. */
  request(method: string, params: Record<string, unknown> | undefined, options: RequestOptions = {}): Promise<Record<string, unknown>> {
    const { cancellation, onProgress } = options;
    if (cancellation?.cancelled) return Promise.reject(asError(cancellation.reason));
    if (this.#closed) return Promise.reject(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
    const id = `${ID_PREFIX}${this.#nextId++}`;
    const timeoutMs = options.timeoutMs ?? this.#defaultTimeoutMs;
    const sent = this.#withEnvelope(withProgressToken(params, onProgress ? id : undefined), options.clientCapabilities);
    const startedAt = performance.now();
    // Modern streamable HTTP has one stream per request, and closing it is the cancellation.
    const stream = this.#envelope && this.#perRequestStream ? new AbortController() : undefined;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, {
        method,
        resolve,
        reject,
        onProgress,
        timeoutMs,
        deadline: startedAt + timeoutMs,
        startedAt,
        stopListening: cancellation?.onCancel((reason) => this.#cancel(id, asError(reason))),
        stream,
      });
      this.#watchDeadline(startedAt + timeoutMs);
      const message: JSONRPCMessage = sent === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params: sent };
      const { trace } = options;
      const headers = this.#envelope && options.headers;
      const sendOptions: TracedSendOptions | undefined =
        stream || trace || headers
          ? { ...(stream && { requestSignal: stream.signal }), ...(trace && { requestTrace: trace }), ...(headers && { headers }) }
          : undefined;
      const sending: Promise<void> = this.inner.send(message, sendOptions);
      sending.catch((error: unknown) => this.#settle(id)?.reject(error));
    });
  }

  // Answers and progress of this layer's requests stop here; everything else goes on to the Client.
  protected receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message) {
      if (!('id' in message)) {
        if (message.method === 'notifications/progress' && this.#takeProgress(message.params)) return;
        this.#hooks.onNotification?.(message);
      }
    } else if ('id' in message && typeof message.id === 'string' && this.#answer(message.id, message)) {
      return;
    }
    this.onmessage?.(message, extra);
  }

  #answer(id: string, message: JSONRPCMessage): boolean {
    const pending = this.#settle(id);
    if (!pending) return false;
    if ('result' in message) {
      const { result } = message;
      // The one check a forwarded result gets: an object (a gateway passes its fields on untouched).
      if (typeof result === 'object' && result !== null && !Array.isArray(result)) pending.resolve(withoutCompleteType(result));
      else
        pending.reject(
          new ProtocolError(
            ProtocolErrorCode.InvalidRequest,
            `the server answered ${pending.method} with ${JSON.stringify(result)}, not a result object`,
          ),
        );
    } else if ('error' in message) {
      pending.reject(ProtocolError.fromError(message.error.code, message.error.message, message.error.data));
    }
    return true;
  }

  #takeProgress(params: Record<string, unknown> | undefined): boolean {
    const token = params?.progressToken;
    const pending = typeof token === 'string' ? this.#pending.get(token) : undefined;
    if (!pending?.onProgress) return false;
    const now = performance.now();
    const elapsedMs = now - pending.startedAt;
    const maxTotalMs = pending.timeoutMs * MAX_TOTAL_TIMEOUTS;
    if (elapsedMs >= maxTotalMs) {
      this.#cancel(
        token as string,
        new SdkError(SdkErrorCode.RequestTimeout, 'Maximum total timeout exceeded', {
          maxTotalTimeout: maxTotalMs,
          totalElapsed: elapsedMs,
        }),
      );
      return true;
    }
    // A later deadline needs no timer change: the timer, when it fires, looks again.
    pending.deadline = now + pending.timeoutMs;
    const { progressToken: _token, ...progress } = params as unknown as Progress & { progressToken: string };
    pending.onProgress(progress);
    return true;
  }

  // Have the deadline timer fire by `deadline`.
  #watchDeadline(deadline: number): void {
    if (deadline >= this.#deadlineTimerAt) return;
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimerAt = deadline;
    // A deadline past what a timer holds is reached by firing, finding nothing due, and setting it again.
    this.#deadlineTimer = setTimeout(this.#expireDue, Math.min(deadline - performance.now(), MAX_TIMER_MS));
    // The request's own transport keeps the process alive while it waits; this timer need not.
    this.#deadlineTimer.unref();
  }

  // Time out every request past its deadline, and set the timer for the next one.
  readonly #expireDue = (): void => {
    this.#deadlineTimer = undefined;
    this.#deadlineTimerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const [id, pending] of this.#pending) {
      if (pending.deadline <= now) {
        this.#cancel(id, new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: pending.timeoutMs }));
      } else next = Math.min(next, pending.deadline);
    }
    if (next !== Infinity) this.#watchDeadline(next);
  };

  // Give up on a request: the server is told (so it can stop work) and the caller gets `reason`.
  #cancel(id: string, reason: Error): void {
    const pending = this.#settle(id);
    if (!pending) return;
    if (pending.stream) pending.stream.abort(reason);
    else {
      const params = this.#withEnvelope({ requestId: id, reason: reason.message });
      this.inner.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params }).catch(() => undefined);
    }
    pending.reject(reason);
  }

  // A modern server's request carries the envelope beside whatever `_meta` the caller gave.
  #withEnvelope(params: Record<string, unknown> | undefined, clientCapabilities?: ClientCapabilities): Record<string, unknown> | undefined {
    const envelope = this.#envelope;
    if (!envelope) return params;
    const meta = params?._meta as Record<string, unknown> | undefined;
    const relayed = clientCapabilities && relayable(clientCapabilities);
    if (meta === undefined && relayed && !Object.keys(relayed).length) return { ...params, _meta: this.#plainMeta };
    return { ...params, _meta: envelopeMeta(envelope, meta, relayed && { [CLIENT_CAPABILITIES_META_KEY]: relayed }) };
  }

  // Remove a request from the pending set (exactly once) and return it to be settled.
  #settle(id: string): PendingRequest | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    pending.stopListening?.();
    return pending;
  }
}

// The caller's own progress token means nothing downstream: it is replaced by ours, or dropped.
function withProgressToken(params: Record<string, unknown> | undefined, token: string | undefined): Record<string, unknown> | undefined {
  const meta = params?._meta as Record<string, unknown> | undefined;
  const callerToken = typeof meta === 'object' && meta !== null ? meta.progressToken : undefined;
  if (token === undefined && callerToken === undefined) return params;
  const { progressToken: _dropped, ...rest } = meta ?? {};
  if (token !== undefined) rest.progressToken = token;
  const { _meta: _old, ...fields } = params ?? {};
  return Object.keys(rest).length ? { ...fields, _meta: rest } : fields;
}

// The `_meta` of a modern server's request: the envelope's fixed keys over the caller's own, its defaults under them.
function envelopeMeta(
  envelope: Envelope,
  meta: Record<string, unknown> | undefined,
  narrowed: Record<string, unknown> | undefined,
): Record<string, unknown> {
  return { ...envelope.defaults, ...meta, ...envelope.fixed, ...narrowed };
}

// The capabilities loadout can relay to a client, as that client declared them.
function relayable({ sampling, elicitation, roots }: ClientCapabilities): ClientCapabilities {
  return { ...(sampling ? { sampling } : {}), ...(elicitation ? { elicitation } : {}), ...(roots ? { roots } : {}) };
}

// `resultType: 'complete'` is the modern era's word for what a 2025 result is without it; any other
// type (input_required) is left for the connection to act on.
function withoutCompleteType(result: Record<string, unknown>): Record<string, unknown> {
  if (result.resultType !== 'complete') return result;
  const { resultType: _complete, ...rest } = result;
  return rest;
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
