// The cancellation of one forwarded call. Node's AbortSignal is an EventTarget that costs tens of
// microseconds per call to create, listen to and collect, and almost no call is ever cancelled:
// on the call path that was a tenth of what loadout adds to a call. This is a plain callback
// list; an AbortSignal is made only when code that needs one asks (a server start, a relay).

/** Cancels one call; listeners hear it once, with the reason. */
export class Cancellation {
  #cancelled = false;
  #reason: unknown;
  #listeners: Array<(reason: unknown) => void> | undefined;
  #controller: AbortController | undefined;

  /** A Cancellation that follows `signal` (for callers that already hold one). */
  static fromSignal(signal: AbortSignal): Cancellation {
    const cancellation = new Cancellation();
    if (signal.aborted) cancellation.cancel(signal.reason);
    else signal.addEventListener('abort', () => cancellation.cancel(signal.reason), { once: true });
    return cancellation;
  }

  /** Whether cancel() has been called. */
  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** What cancel() was called with. */
  get reason(): unknown {
    return this.#reason;
  }

  /** An AbortSignal that aborts with this, for APIs that take one (made on first use). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#cancelled) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Cancel (once): every listener runs with `reason`. */
  cancel(reason: unknown): void {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#reason = reason;
    const listeners = this.#listeners ?? [];
    this.#listeners = undefined;
    this.#controller?.abort(reason);
    for (const listener of listeners) listener(reason);
  }

  /** Run `listener` when cancelled; returns the function that stops listening. */
  onCancel(listener: (reason: unknown) => void): () => void {
    if (this.#cancelled) return () => undefined;
    (this.#listeners ??= []).push(listener);
    return () => {
      const index = this.#listeners?.indexOf(listener) ?? -1;
      if (index >= 0) this.#listeners!.splice(index, 1);
    };
  }
}
