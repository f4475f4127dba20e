// The cached definitions of every server, in memory and where they are kept (the store's catalog
// records, files mode's catalog.json among them: a DefinitionSource). They change only by
// listings, list by list and in the order the listings were requested, so no writer can drop
// what another listed: a tool-list re-check that raced discovery replaces the tools and nothing
// else, and a listing requested earlier never replaces a list fetched by a later one. Memory
// changes at once; what is kept follows on flush(), in the same order.
import { Mutex } from 'async-mutex';
import { isDeepStrictEqual } from 'node:util';
import type { DefinitionCache, DefinitionChange, DefinitionSource } from './definitionCache.js';
import { applyListing, type ListName, type ServerListing } from './serverListing.js';

/** Every server's cached definitions, changed by listings in order. */
export class DefinitionStore {
  readonly #source: DefinitionSource;
  #definitions: DefinitionCache = {};
  /** Changes made in memory but not yet kept, oldest first. Memory = the last read + these. */
  #unwritten: DefinitionChange[] = [];
  /** Per server and list: the stamp of the listing that set it last. */
  readonly #stamps = new Map<string, Map<ListName, number>>();
  #lastStamp = 0;
  // One read or write at a time, in the order asked: a read then sees every earlier write.
  readonly #sourceLock = new Mutex();
  /** The write that has not started yet: later flushes join it. */
  #queuedWrite: Promise<void> | undefined;

  constructor(source: DefinitionSource) {
    this.#source = source;
  }

  /** The definitions now, by server. */
  get all(): DefinitionCache {
    return this.#definitions;
  }

  /** Take before sending a listing's requests; its record() then ranks it against the other listings. */
  stamp(): number {
    return ++this.#lastStamp;
  }

  /**
   * Apply `listing` (requested at `stamp`) to the server's entry in memory; only the lists no later
   * listing has set already are taken. With `ifChanged`, a listing that would change nothing but
   * the time is dropped. Returns whether the entry changed; flush() writes it.
   */
  record(server: string, listing: ServerListing, stamp: number, options: { ifChanged?: boolean } = {}): boolean {
    const stamps = this.#stamps.get(server) ?? new Map<ListName, number>();
    const covers = listing.covers.filter((list) => (stamps.get(list) ?? 0) < stamp);
    if (!covers.length) return false;
    const change = (entry: DefinitionCache[string] | undefined) => applyListing(entry, { ...listing, covers });
    const current = this.#definitions[server];
    const next = change(current);
    if (options.ifChanged && current && isDeepStrictEqual({ ...next, discoveredAt: current.discoveredAt }, current)) return false;
    for (const list of covers) stamps.set(list, stamp);
    this.#stamps.set(server, stamps);
    this.#definitions = { ...this.#definitions, [server]: next };
    this.#unwritten.push({ server, change });
    return true;
  }

  /** Change the server's entry in memory by `change` (not a listing: an approval); flush() keeps it, applied to the entry kept then. */
  amend(server: string, change: DefinitionChange['change']): void {
    const next = change(this.#definitions[server]);
    const { [server]: _previous, ...others } = this.#definitions;
    this.#definitions = next ? { ...others, [server]: next } : others;
    this.#unwritten.push({ server, change });
  }

  /** Keep every change recorded so far; concurrent flushes share one write. */
  flush(): Promise<void> {
    if (this.#queuedWrite) return this.#queuedWrite;
    const write: Promise<void> = this.#sourceLock.runExclusive(async () => {
      // From here on, new changes wait for the next write.
      if (this.#queuedWrite === write) this.#queuedWrite = undefined;
      const batch = this.#unwritten.splice(0);
      if (!batch.length) return;
      try {
        await this.#source.update(batch);
      } catch (error) {
        // Kept for the next flush, ahead of anything recorded since.
        this.#unwritten.unshift(...batch);
        throw error;
      }
    });
    this.#queuedWrite = write;
    return write;
  }

  /** Read again what is kept (another process may have written it); changes not yet kept stay applied. */
  read(): Promise<void> {
    return this.#sourceLock.runExclusive(async () => {
      const definitions = await this.#source.read();
      for (const { server, change } of this.#unwritten) {
        const entry = change(definitions[server]);
        if (entry) definitions[server] = entry;
        else delete definitions[server];
      }
      this.#definitions = definitions;
    });
  }
}
