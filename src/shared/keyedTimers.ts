// One pending timer per key (a server's idle stop, its next reconnect): setting a key replaces its
// timer, and no timer ever keeps the process alive. Setting a key again with the same delay
// restarts its timer in place: the idle timer is set after every forwarded call, and a new
// timer per call costs more than the call's own bookkeeping.

interface PendingTimer {
  timer: NodeJS.Timeout;
  delayMs: number;
  task: () => void;
}

/** Unref'd timers addressed by key. */
export class KeyedTimers {
  readonly #timers = new Map<string, PendingTimer>();

  /** Run `task` after `delayMs` unless cleared first; replaces any timer pending for `key`. */
  set(key: string, delayMs: number, task: () => void): void {
    const pending = this.#timers.get(key);
    if (pending && pending.delayMs === delayMs) {
      pending.task = task;
      pending.timer.refresh();
      return;
    }
    this.clear(key);
    const entry: PendingTimer = {
      timer: setTimeout(() => {
        this.#timers.delete(key);
        entry.task();
      }, delayMs),
      delayMs,
      task,
    };
    entry.timer.unref();
    this.#timers.set(key, entry);
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
}
