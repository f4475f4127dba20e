// One pending timer per key (a server's idle stop, its next reconnect): setting a key replaces its
// timer, and no timer ever keeps the process alive. Setting a key again to run no earlier only
// moves its due time: the idle timer is set after every forwarded call, and restarting a timer
// per call costs more than the call's own bookkeeping, so the timer, when it fires early, waits
// again for the rest.

/** The longest delay a Node timer holds: a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

interface PendingTimer {
  timer: NodeJS.Timeout | undefined;
  /** When the timer itself fires (performance.now(): monotonic). */
  firesAt: number;
  /** When the task is due: firesAt or later. */
  dueAt: number;
  task: () => void;
}

/** Unref'd timers addressed by key. */
export class KeyedTimers {
  readonly #timers = new Map<string, PendingTimer>();

  /** Run `task` after `delayMs` unless cleared first; replaces any timer pending for `key`. */
  set(key: string, delayMs: number, task: () => void): void {
    const dueAt = performance.now() + delayMs;
    const pending = this.#timers.get(key);
    if (pending && pending.firesAt <= dueAt) {
      pending.dueAt = dueAt;
      pending.task = task;
      return;
    }
    this.clear(key);
    this.#arm(key, { timer: undefined, firesAt: dueAt, dueAt, task });
  }

  /** Whether a timer is pending for `key`. */
  has(key: string): boolean {
    return this.#timers.has(key);
  }

  /** Keys with a pending timer. */
  keys(): IterableIterator<string> {
    return this.#timers.keys();
  }

  /** Cancel the timer of `key`, if any. */
  clear(key: string): void {
    const pending = this.#timers.get(key);
    if (pending) clearTimeout(pending.timer);
    this.#timers.delete(key);
  }

  /** Cancel every pending timer. */
  clearAll(): void {
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #arm(key: string, entry: PendingTimer): void {
    entry.firesAt = Math.max(entry.dueAt, performance.now());
    const timer = setTimeout(
      () => {
        if (performance.now() < entry.dueAt) return this.#arm(key, entry);
        this.#timers.delete(key);
        entry.task();
      },
      Math.min(entry.firesAt - performance.now(), MAX_TIMER_MS),
    );
    timer.unref();
    entry.timer = timer;
    this.#timers.set(key, entry);
  }
}
