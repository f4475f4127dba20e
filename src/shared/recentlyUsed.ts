// A map that holds at most so many entries, dropping the least recently used one past that: what a
// gateway keeps per principal (views, equipped sets, grants) follows the principals in use, not
// every principal ever seen. An entry still in use may be kept past the bound; it goes once idle.
/** Options of a RecentlyUsed map. */
export interface RecentlyUsedOptions<K, V> {
  /** Whether `value` may be dropped now (default: always). */
  readonly evictable?: (value: V) => boolean;
  /** Told of each entry dropped for the bound (to close it). */
  readonly onEvict?: (value: V, key: K) => void;
}

/** A Map bounded to `max` entries, least recently used first out. */
export class RecentlyUsed<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #max: number;
  readonly #options: RecentlyUsedOptions<K, V>;

  constructor(max: number, options: RecentlyUsedOptions<K, V> = {}) {
    this.#max = max;
    this.#options = options;
  }

  /** The value of `key`, now its most recently used. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    // A Map iterates in insertion order: re-inserting moves the key to the recent end.
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  /** Add or replace `key`, most recently used; past the bound, the oldest evictable entries go. */
  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size <= this.#max) return;
    const { evictable = () => true, onEvict } = this.#options;
    for (const [oldKey, oldValue] of this.#entries) {
      if (this.#entries.size <= this.#max) break;
      if (oldKey === key || !evictable(oldValue)) continue;
      this.#entries.delete(oldKey);
      onEvict?.(oldValue, oldKey);
    }
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }

  values(): IterableIterator<V> {
    return this.#entries.values();
  }
}
