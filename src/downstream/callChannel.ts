// Forwarded tools/call requests to one downstream server, sent as plain JSON-RPC on the
// connection's transport beside the SDK Client (which keeps the handshake, tools/list, ping and
// the server's own requests). A gateway forwards results untouched, so the Client's per-request
// machinery (result schema parse, progress and timeout maps keyed by number) is cost without use
// on the hottest path. The semantics are the Client's: the same timeout, progress and
// cancellation behaviour, and the same McpError codes, so callers cannot tell the two apart.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type CallToolResult, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { CallOptions } from './connection.js';

type RequestId = string | number;
type Progress = Parameters<NonNullable<CallOptions['onProgress']>>[0];

/** How long a forwarded call may take. */
export interface CallTimeout {
  /** Time allowed without an answer; each progress notification restarts it when progress is asked for. */
  timeoutMs: number;
  /** Time allowed in all, however much progress arrives. */
  maxTotalMs: number;
}

interface PendingCall {
  resolve(result: CallToolResult): void;
  reject(error: unknown): void;
  onProgress: CallOptions['onProgress'];
  timer: NodeJS.Timeout;
  startedAt: number;
  end(): void;
}

// The SDK Client numbers its requests 0, 1, 2…; string ids can never collide with them.
const ID_PREFIX = 'call-';

/** The forwarded calls in flight on one connection. */
export class CallChannel {
  readonly #transport: Transport;
  readonly #timeout: CallTimeout;
  readonly #pending = new Map<RequestId, PendingCall>();
  #nextId = 0;
  #closed = false;

  /**
   * Take over the transport's incoming messages, in front of the SDK Client already connected
   * to it: answers and progress for this channel's calls stop here, everything else goes on.
   */
  constructor(transport: Transport, timeout: CallTimeout) {
    this.#transport = transport;
    this.#timeout = timeout;
    const clientOnMessage = transport.onmessage;
    const clientOnClose = transport.onclose;
    transport.onmessage = (message, extra) => {
      if (!this.#take(message)) clientOnMessage?.(message, extra);
    };
    transport.onclose = () => {
      this.#closeAll();
      clientOnClose?.();
    };
  }

  /** Send tools/call for `name` and settle with the server's result, unchanged. */
  call(name: string, args: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<CallToolResult> {
    const { cancellation, onProgress } = options;
    if (cancellation?.cancelled) return Promise.reject(cancellation.reason);
    if (this.#closed) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    const id = `${ID_PREFIX}${this.#nextId++}`;
    const params: Record<string, unknown> = args === undefined ? { name } : { name, arguments: args };
    // The server reports progress against a token of ours: the caller's own token means nothing here.
    if (onProgress) params._meta = { progressToken: id };
    return new Promise<CallToolResult>((resolve, reject) => {
      const pending: PendingCall = {
        resolve,
        reject,
        onProgress,
        timer: setTimeout(() => this.#cancel(id, new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: this.#timeout.timeoutMs })), this.#timeout.timeoutMs),
        startedAt: performance.now(),
        end: () => {
          clearTimeout(pending.timer);
          stopListening?.();
        },
      };
      this.#pending.set(id, pending);
      const stopListening = cancellation?.onCancel((reason) => this.#cancel(id, reason));
      this.#transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params }).catch((error: unknown) => this.#settle(id)?.reject(error));
    });
  }

  // True when `message` belonged to one of this channel's calls (and was dealt with).
  #take(message: JSONRPCMessage): boolean {
    if ('method' in message) {
      if (message.method !== 'notifications/progress') return false;
      const { progressToken, ...progress } = message.params as Progress & { progressToken?: RequestId };
      const pending = progressToken === undefined ? undefined : this.#pending.get(progressToken);
      if (!pending) return false;
      this.#onProgress(progressToken!, pending, progress);
      return true;
    }
    const pending = 'id' in message && message.id !== undefined ? this.#settle(message.id) : undefined;
    if (!pending) return false;
    if ('result' in message) {
      const { result } = message;
      // The one check a forwarded result gets: an object (a gateway passes its fields on untouched).
      if (typeof result === 'object' && result !== null && !Array.isArray(result)) pending.resolve(result as CallToolResult);
      else pending.reject(new McpError(ErrorCode.InvalidRequest, `the server answered tools/call with ${JSON.stringify(result)}, not a result object`));
    } else {
      pending.reject(McpError.fromError(message.error.code, message.error.message, message.error.data));
    }
    return true;
  }

  #onProgress(id: RequestId, pending: PendingCall, progress: Progress): void {
    const elapsedMs = performance.now() - pending.startedAt;
    if (elapsedMs >= this.#timeout.maxTotalMs) {
      this.#cancel(id, new McpError(ErrorCode.RequestTimeout, 'Maximum total timeout exceeded', { maxTotalTimeout: this.#timeout.maxTotalMs, totalElapsed: elapsedMs }));
      return;
    }
    pending.timer.refresh();
    pending.onProgress?.(progress);
  }

  // Give up on a call: the server is told (so it can stop work) and the caller gets `reason`.
  #cancel(id: RequestId, reason: unknown): void {
    const pending = this.#settle(id);
    if (!pending) return;
    this.#transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason) } }).catch(() => undefined);
    pending.reject(reason instanceof McpError ? reason : new McpError(ErrorCode.RequestTimeout, String(reason)));
  }

  // Remove a call from the pending set (exactly once) and return it to be settled.
  #settle(id: RequestId): PendingCall | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    pending.end();
    return pending;
  }

  #closeAll(): void {
    this.#closed = true;
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
  }
}
