// A collection of the store kept in the replica's local copy (localCopy.ts) as it is used: each
// answer the store gives is kept, and while the store is away (isStoreAway) a read is answered from
// the copy. What the copy does not know is the store's fault, thrown as it came (it names the
// store): never an empty answer. Writes are the store's alone: refused while it is away.
import { errorMessage, type Logger } from '../shared/index.js';
import type { RecordOf } from './records.js';
import type { CopiedKind, LocalCopy } from './localCopy.js';
import type { ListedRecord, PutOptions, RecordCollection, StoredRecord } from './store.js';
import { isStoreAway } from './storeFaults.js';

/** `inner` with every answer kept in `copy`, and read from it while the store is away. */
export class CopiedCollection<K extends CopiedKind> implements RecordCollection<RecordOf<K>> {
  readonly #kind: K;
  readonly #inner: RecordCollection<RecordOf<K>>;
  readonly #copy: LocalCopy;
  readonly #log: Logger;

  constructor(kind: K, inner: RecordCollection<RecordOf<K>>, copy: LocalCopy, logger: Logger) {
    this.#kind = kind;
    this.#inner = inner;
    this.#copy = copy;
    this.#log = logger;
  }

  async get(key: string): Promise<StoredRecord<RecordOf<K>> | undefined> {
    let record: StoredRecord<RecordOf<K>> | undefined;
    try {
      record = await this.#inner.get(key);
    } catch (error) {
      const kept = isStoreAway(error) ? await this.#copy.get(this.#kind, key) : undefined;
      if (!kept) throw error;
      this.#log.debug({ kind: this.#kind, key, err: errorMessage(error) }, 'store away; read the local copy');
      return kept.absent ? undefined : kept.record;
    }
    await this.#copy.keep(this.#kind, key, record);
    return record;
  }

  async list(): Promise<Array<StoredRecord<RecordOf<K>>>> {
    let records: Array<StoredRecord<RecordOf<K>>>;
    try {
      records = await this.#inner.list();
    } catch (error) {
      const kept = isStoreAway(error) ? await this.#copy.list(this.#kind) : undefined;
      if (!kept) throw error;
      this.#log.debug({ kind: this.#kind, err: errorMessage(error) }, 'store away; listed the local copy');
      return kept;
    }
    await this.#copy.keepListing(this.#kind, records);
    return records;
  }

  async listEach(): Promise<Array<ListedRecord<RecordOf<K>>>> {
    // Postgres reads a listing whole or not at all: no record of it is unreadable alone.
    return (await this.list()).map((record) => ({ kind: 'ok', record }));
  }

  async put(key: string, value: RecordOf<K>, options?: PutOptions): Promise<number> {
    const revision = await this.#inner.put(key, value, options);
    await this.#copy.keep(this.#kind, key, { key, value, revision });
    return revision;
  }

  async putAll(records: ReadonlyArray<{ key: string; value: RecordOf<K> }>): Promise<void> {
    await this.#inner.putAll(records);
    // Their revisions are not answered: the copy forgets them until they are read again.
    await this.#copy.forget(
      this.#kind,
      records.map((record) => record.key),
    );
  }

  async update(
    key: string,
    change: (current: RecordOf<K> | undefined) => RecordOf<K> | undefined,
  ): Promise<StoredRecord<RecordOf<K>> | undefined> {
    const record = await this.#inner.update(key, change);
    await this.#copy.keep(this.#kind, key, record);
    return record;
  }

  async updateAll(changes: ReadonlyMap<string, (current: RecordOf<K> | undefined) => RecordOf<K> | undefined>): Promise<void> {
    await this.#inner.updateAll(changes);
    // No revisions come back: each is read again, so the copy holds what was just written (or
    // forgets it, if that read fails).
    for (const key of changes.keys()) {
      const record = await this.#inner.get(key).catch(() => null);
      await (record === null ? this.#copy.forget(this.#kind, [key]) : this.#copy.keep(this.#kind, key, record));
    }
  }

  async delete(key: string): Promise<boolean> {
    const deleted = await this.#inner.delete(key);
    await this.#copy.keep(this.#kind, key, undefined);
    return deleted;
  }
}
