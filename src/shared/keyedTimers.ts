// One pending timer per key (a server's idle stop, its next reconnect): setting a key replaces its
// timer, and no timer ever keeps the process alive.

/** Unref'd timers addressed by key. */
export class KeyedTimers {
  readonly #timers = new Map<string, NodeJS.Timeout>();

  /** Run `task` after `delayMs` unless cleared first; replaces any timer pending for `key`. */
  set(key: string, delayMs: number, task: () => void): void {
    this.clear(key);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      task();
    }, delayMs);
    timer.unref();
    this.#timers.set(key, timer);
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
    const timer = this.#timers.get(key);
    if (timer) clearTimeout(timer);
    this.#timers.delete(key);
  }

  /** Cancel every pending timer. */
  clearAll(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
