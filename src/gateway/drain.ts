// A gateway's drain at SIGTERM, whatever it serves over: from start(), the ways in refuse new work
// (they ask `draining`), the work under way is waited for up to --drain-seconds, then what is left
// is cut off (each downstream request answered with DRAIN_LIMIT) and its answers waited for briefly.
// It counts work; it knows nothing of HTTP or stdio, nor of what ends the process.
import { LoadoutError } from '../shared/index.js';
import type { ServerPool } from '../downstream/index.js';

// After the cut-off, how long the answers it causes may take to reach their clients.
const ANSWER_GRACE_MS = 2000;

/** The error of a new request refused while draining (never run: safe to send again elsewhere). */
export function drainingRefusal(): LoadoutError {
  return new LoadoutError('DRAINING', 'loadout is shutting down and takes no new requests; send it again (another replica answers it)');
}

/** Counts the work a gateway has under way, and drains it. */
export class Drain {
  #open = 0;
  #draining = false;
  #onIdle: (() => void) | undefined;
  #cutShort: (() => void) | undefined;

  /** Whether start() has run: new work is refused. */
  get draining(): boolean {
    return this.#draining;
  }

  /** Work begun; the returned function ends it (once). */
  begin(): () => void {
    this.#open++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.#open === 0) this.#onIdle?.();
    };
  }

  /**
   * Refuse new work from now on, wait up to `limitMs` for the work under way, and cut off what is
   * left with `cutOff` (whose answers are then waited for, briefly). Resolves true when all work
   * ended by itself. Runs once; cutShort() ends the wait at once.
   */
  async start(limitMs: number, cutOff: () => void): Promise<boolean> {
    this.#draining = true;
    const finished = await this.#idleWithin(limitMs, true);
    if (finished) return true;
    cutOff();
    await this.#idleWithin(ANSWER_GRACE_MS, false);
    return false;
  }

  /** Stop waiting for the work under way: cut it off now (a second signal). */
  cutShort(): void {
    this.#cutShort?.();
  }

  #idleWithin(ms: number, shortenable: boolean): Promise<boolean> {
    if (this.#open === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (idle: boolean): void => {
        clearTimeout(timer);
        this.#onIdle = undefined;
        this.#cutShort = undefined;
        resolve(idle);
      };
      const timer = setTimeout(() => done(false), ms);
      this.#onIdle = () => done(true);
      if (shortenable) this.#cutShort = () => done(false);
    });
  }
}

/** The cut-off of a drain of `limitSeconds`: every downstream request under way answered with DRAIN_LIMIT. */
export function cutOffCalls(pool: ServerPool, limitSeconds: number): () => void {
  return () =>
    pool.cancelRequests(
      new LoadoutError('DRAIN_LIMIT', `loadout is shutting down and the request did not finish within --drain-seconds (${limitSeconds} s)`),
    );
}
