// The drain of `serve --http` (drain.ts) in HTTP's terms: while draining, /healthz says `draining`
// and a new request (a session, a request, a GET stream) is answered 503 with Retry-After, so a
// balancer moves on; each POST under way is work until its response ends; the long-lived streams
// (2025 GET streams, 2026-07-28 listen streams) are ended at the start, so their clients
// reconnect elsewhere. A client's answer or notice (an in-flight call may wait on it) still passes.
// Every answer from the start of the drain says `Connection: close`: a keep-alive client (a
// balancer's pool, undici's fetch) would otherwise send its next request on the same socket to this
// replica, and the one it sends as the process exits meets a reset instead of an answer.
import type { ServerResponse } from 'node:http';
import { Drain, drainingRefusal } from '../drain.js';

/** Seconds a refused client is told to wait (Retry-After): about how long a balancer takes to move on. */
export const DRAINING_RETRY_AFTER_SECONDS = 5;

/** The answer to a request refused while draining: status, headers and JSON-RPC body. */
export function drainingAnswer(): [status: 503, headers: Record<string, string>, body: unknown] {
  const { code, message } = drainingRefusal();
  return [
    503,
    { 'Retry-After': String(DRAINING_RETRY_AFTER_SECONDS) },
    { jsonrpc: '2.0', error: { code: -32000, message, data: { code } }, id: null },
  ];
}

/** One HTTP gateway's drain. */
export class HttpDrain {
  readonly #drain = new Drain();
  // The answers under way whose head is not written yet: the drain's start marks them too.
  readonly #answering = new Set<ServerResponse>();

  /** Whether the drain has begun. */
  get draining(): boolean {
    return this.#drain.draining;
  }

  /** Whether to refuse a request with `method` and parsed `body` now: a GET stream, or a POST carrying a request. */
  refuses(method: string | undefined, body: unknown): boolean {
    if (!this.#drain.draining) return false;
    if (method === 'GET') return true;
    if (method !== 'POST') return false;
    const messages: unknown[] = Array.isArray(body) ? body : [body];
    return messages.some((message) => typeof message === 'object' && message !== null && 'method' in message && 'id' in message);
  }

  /** Mark any answer on `res` to close its connection once sent, while draining; until then, hold it to mark at the start. */
  closesWhenDraining(res: ServerResponse): void {
    if (this.#drain.draining) return closeAfter(res);
    this.#answering.add(res);
    res.once('close', () => this.#answering.delete(res));
  }

  /** Count the POST answered on `res` as work until its response ends; a listen stream is none. */
  track(res: ServerResponse, body: unknown): void {
    if ((body as { method?: unknown } | undefined)?.method === 'subscriptions/listen') return;
    res.once('close', this.#drain.begin());
  }

  /**
   * Drain: refuse new requests, end the streams (`endStreams`), wait up to `limitMs` for the POSTs
   * under way, then `cutOff` the rest. Resolves true when all ended by themselves.
   */
  run(limitMs: number, endStreams: () => void, cutOff: () => void): Promise<boolean> {
    const drained = this.#drain.start(limitMs, cutOff);
    for (const res of this.#answering) closeAfter(res);
    this.#answering.clear();
    endStreams();
    return drained;
  }

  /** End the wait at once (a second signal). */
  cutShort(): void {
    this.#drain.cutShort();
  }
}

// An answer whose head is still to be written says `Connection: close`, and Node closes the socket after it.
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}
