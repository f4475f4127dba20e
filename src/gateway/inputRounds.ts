// A 2026-07-28 client cannot be sent requests: when a 2025-era server asks for sampling or
// elicitation during a call, loadout answers the client's call with an InputRequiredResult carrying
// the server's request, and keeps the downstream call waiting; the client retries the same call
// with its answers (inputResponses) and the requestState it was given, and loadout hands the answers
// to the server and waits again (multi round-trip requests). A RoundTripCall is one such downstream
// call, which outlives the client request that started it; InputRounds keeps the calls waiting for
// a retry, per gateway, keyed by their requestState: an unguessable id, never data the client could
// alter, good for one retry, dropped (and the downstream call cancelled) when no retry comes in time.
import { randomBytes } from 'node:crypto';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Progress, RelayedRequest } from '../downstream/index.js';
import { Cancellation, type Logger } from '../shared/index.js';

/** How a round ends: the downstream settled, or it asked for input the client must give first. */
type RoundEnd = 'settled' | 'asked';

/** A retry whose requestState loadout does not hold: answered as a JSON-RPC error, never as a tool's failure. */
export class UnknownRequestStateError extends ProtocolError {}

// A request of the downstream waiting for the client's answer.
interface Ask {
  readonly request: RelayedRequest;
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (error: Error) => void;
  /** Handed to the client in an InputRequiredResult (its answer may come on the next retry). */
  sent: boolean;
}

/** The downstream call of a 2026-07-28 client request whose server asks for input on the way. */
export class RoundTripCall {
  /** What the call is (e.g. `files.read_text_file`): a retry must name the same. */
  readonly label: string;
  /** Cancels the downstream request (the client cancelled, or never came back). */
  readonly cancellation = new Cancellation();
  /** Where the downstream's progress goes: the client request waiting now, if it asked for progress. */
  onProgress: ((progress: Progress) => void) | undefined;
  readonly #asks = new Map<string, Ask>();
  // Set by begin(), which the call's maker runs at once (a rejected placeholder would cost an
  // Error, and its stack, on every forwarded 2026-07-28 call).
  #outcome: Promise<Record<string, unknown>> | undefined;
  #nextKey = 0;
  #settled = false;
  #wake: ((end: RoundEnd) => void) | undefined;

  constructor(label: string) {
    this.label = label;
  }

  /** The downstream request, once sent: its settling ends the round waiting then. */
  begin(outcome: Promise<Record<string, unknown>>): void {
    this.#outcome = outcome;
    const settle = (): void => {
      this.#settled = true;
      this.#wake?.('settled');
    };
    // Handled here too: a call dropped before its failure was read must not leave it unhandled.
    outcome.then(settle, settle);
  }

  /** The downstream's result (or its failure, thrown). */
  get outcome(): Promise<Record<string, unknown>> {
    return this.#outcome ?? Promise.reject(new Error('the call has not begun'));
  }

  /**
   * The downstream asks for input: the waiting round ends with an InputRequiredResult. The input
   * goes under `serverKey`, the key a 2026-07-28 server gave it, so the rounds pass through as the
   * server wrote them; a 2025 server's request (no key), or a key in use, gets one of loadout's.
   */
  ask(request: RelayedRequest, signal: AbortSignal, serverKey?: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      let key = serverKey;
      while (key === undefined || this.#asks.has(key)) key = `${request.method.split('/')[0]}-${++this.#nextKey}`;
      // The downstream gave up on its request (its own timeout, or loadout cancelled the call).
      const giveUp = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      if (signal.aborted) return giveUp();
      const onAbort = (): void => {
        if (this.#asks.delete(key)) giveUp();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const settled = (): void => signal.removeEventListener('abort', onAbort);
      this.#asks.set(key, {
        request,
        resolve: (response) => (settled(), resolve(response)),
        reject: (error) => (settled(), reject(error)),
        sent: false,
      });
      this.#wake?.('asked');
    });
  }

  /** Hand the client's answers to the requests it was sent; a request it did not answer is asked again. */
  answer(inputResponses: Readonly<Record<string, unknown>> | undefined): void {
    for (const [key, ask] of this.#asks) {
      const response = inputResponses?.[key];
      if (!ask.sent || typeof response !== 'object' || response === null) continue;
      this.#asks.delete(key);
      ask.resolve(response as Record<string, unknown>);
    }
  }

  /** Wait until the downstream settles or asks for input (at once if it already has). */
  next(): Promise<RoundEnd> {
    if (this.#settled) return Promise.resolve('settled');
    if (this.#asks.size > 0) return Promise.resolve('asked');
    return new Promise((resolve) => {
      this.#wake = (end) => {
        this.#wake = undefined;
        resolve(end);
      };
    });
  }

  /** The input requests of an InputRequiredResult: every request not answered yet, by key. */
  inputRequests(): Record<string, RelayedRequest> {
    const requests: Record<string, RelayedRequest> = {};
    for (const [key, ask] of this.#asks) {
      ask.sent = true;
      requests[key] = { method: ask.request.method, params: ask.request.params } as RelayedRequest;
    }
    return requests;
  }

  /** End the call: the downstream request is cancelled and its requests refused. */
  drop(reason: string): void {
    this.cancellation.cancel(new Error(reason));
    for (const ask of this.#asks.values()) ask.reject(new ProtocolError(ProtocolErrorCode.InvalidRequest, reason));
    this.#asks.clear();
  }
}

interface Parked {
  readonly call: RoundTripCall;
  readonly timer: NodeJS.Timeout;
}

/** The calls waiting for a client's retry, per gateway. */
export class InputRounds {
  readonly #parked = new Map<string, Parked>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Keep `call` until the client retries with the returned requestState, at most `waitMs`. */
  park(call: RoundTripCall, waitMs: number): string {
    const state = randomBytes(24).toString('base64url');
    const timer = setTimeout(() => {
      if (!this.#parked.delete(state)) return;
      const seconds = Math.round(waitMs / 1000);
      this.#logger.info(
        { mod: 'gateway', call: call.label, seconds },
        'dropped a call waiting for input: the client did not retry in time',
      );
      call.drop(`the client did not answer within ${seconds} s`);
    }, waitMs);
    timer.unref();
    this.#parked.set(state, { call, timer });
    return state;
  }

  /** The call a retry continues; a state that is unknown, expired, used or for another call is refused. */
  take(requestState: string, label: string): RoundTripCall {
    const parked = this.#parked.get(requestState);
    if (!parked || parked.call.label !== label) {
      throw new UnknownRequestStateError(
        ProtocolErrorCode.InvalidParams,
        `The requestState of this ${label} retry is unknown or expired: loadout keeps a call waiting for input for the server's timeout_seconds, once, in the process that answered it; call it again without requestState`,
        { reason: 'invalid_request_state' },
      );
    }
    this.#parked.delete(requestState);
    clearTimeout(parked.timer);
    return parked.call;
  }

  /** Drop every waiting call (the gateway is closing). */
  close(): void {
    for (const { call, timer } of this.#parked.values()) {
      clearTimeout(timer);
      call.drop('loadout is shutting down');
    }
    this.#parked.clear();
  }
}
