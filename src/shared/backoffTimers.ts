// Retries by key with capped, jittered exponential backoff: the wait before each attempt doubles
// from a base up to a cap, until the key is reset (it worked). Used to start servers again: an
// always-on one that is down (downstream/health.ts) and one that crashed while it had resource
// subscriptions (gateway/serverEvents.ts).
import { KeyedTimers } from './keyedTimers.js';

/**
 * Delay before attempt `attempt` (0-based): base·2^attempt capped at `maxMs`, then "equal
 * jitter" (between half and all of it) so many servers that died together do not come back in
 * lockstep.
 */
export function backoffDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/** Unref'd retry timers by key, each waiting longer than the one before. */
export class BackoffTimers {
  readonly #timers = new KeyedTimers();
  readonly #attempts = new Map<string, number>();
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #random: () => number;

  constructor(baseMs: number, maxMs: number, random: () => number = Math.random) {
    this.#baseMs = baseMs;
    this.#maxMs = maxMs;
    this.#random = random;
  }

  /** Run `task` after `key`'s next wait; returns which attempt that is (1-based) and the wait. */
  schedule(key: string, task: () => void): { attempt: number; delayMs: number } {
    const attempt = (this.#attempts.get(key) ?? 0) + 1;
    this.#attempts.set(key, attempt);
    const delayMs = backoffDelayMs(attempt - 1, this.#baseMs, this.#maxMs, this.#random);
    this.#timers.set(key, delayMs, task);
    return { attempt, delayMs };
  }

  /** Whether a retry of `key` is waiting. */
  has(key: string): boolean {
    return this.#timers.has(key);
  }

  /** Keys with a retry waiting or attempts counted. */
  keys(): string[] {
    return [...new Set([...this.#timers.keys(), ...this.#attempts.keys()])];
  }

  /** Drop `key`'s waiting retry, keeping its count (an attempt is being made now). */
  cancel(key: string): void {
    this.#timers.clear(key);
  }

  /** Forget `key`: no retry waits and the next one waits the base delay again. */
  reset(key: string): void {
    this.#timers.clear(key);
    this.#attempts.delete(key);
  }

  /** Drop every waiting retry and count. */
  clearAll(): void {
    this.#timers.clearAll();
    this.#attempts.clear();
  }
}
