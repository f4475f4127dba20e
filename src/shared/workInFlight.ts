// Work an owner began and must see finished before it says it has stopped: a discovery that
// writes the catalog, a record of its outcome. An owner that stops awaits settled(), so no file
// is written after its close resolves (a test's temp dir, a user's data dir being moved).

/** The promises of work still running, tracked until they settle. */
export class WorkInFlight {
  readonly #running = new Set<Promise<unknown>>();

  /** Track `work` until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const forget = () => this.#running.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Settles once nothing tracked is running, including work tracked while waiting. Never rejects. */
  async settled(): Promise<void> {
    while (this.#running.size) await Promise.allSettled([...this.#running]);
  }
}
