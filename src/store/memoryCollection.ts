// Records held in this process's memory only: the files backend keeps 2025 sessions this way,
// because in files mode one process serves its own sessions (as loadout always has). Revisions
// still come from the data dir's counter, so they grow with every other write; changes are heard
// by this process's listeners only.
import type * as z from 'zod';
import { LoadoutError, firstIssueText } from '../shared/index.js';
import { conflict, validKey, type DocumentKind } from './records.js';
import type { PutOptions, ListedRecord, RecordCollection, StoreChange, StoredRecord } from './store.js';

/** One kind's records in memory; `nextRevision` takes the next revision, `emit` tells this process's listeners. */
export class MemoryCollection<T> implements RecordCollection<T> {
  readonly #records = new Map<string, StoredRecord<T>>();

  constructor(
    private readonly kind: DocumentKind,
    private readonly schema: z.ZodType<T>,
    private readonly nextRevision: () => Promise<number>,
    private readonly emit: (change: StoreChange) => void,
  ) {}

  get size(): number {
    return this.#records.size;
  }

  get(key: string): Promise<StoredRecord<T> | undefined> {
    return Promise.resolve(this.#records.get(key));
  }

  list(): Promise<Array<StoredRecord<T>>> {
    return Promise.resolve([...this.#records.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
  }

  /** Held as checked: every one reads. */
  async listEach(): Promise<Array<ListedRecord<T>>> {
    return (await this.list()).map((record) => ({ kind: 'ok', record }));
  }

  async put(key: string, value: T, options: PutOptions = {}): Promise<number> {
    validKey(this.kind, key);
    const parsed = this.schema.safeParse(value);
    if (!parsed.success) throw new LoadoutError('INVALID_ARGUMENT', `${this.kind} '${key}' not saved: ${firstIssueText(parsed.error)}`);
    const revision = await this.nextRevision();
    // Checked after the await: a write that landed meanwhile is seen.
    if (options.ifRevision !== undefined && (this.#records.get(key)?.revision ?? null) !== options.ifRevision)
      throw conflict(this.kind, key, options.ifRevision);
    this.#records.set(key, { key, value: parsed.data, revision });
    this.emit({ type: 'change', kind: this.kind, key, op: 'put', revision, missed: false });
    return revision;
  }

  async putAll(records: ReadonlyArray<{ key: string; value: T }>): Promise<void> {
    for (const { key, value } of records) await this.put(key, value);
  }

  async updateAll(changes: ReadonlyMap<string, (current: T | undefined) => T | undefined>): Promise<void> {
    for (const [key, change] of changes) await this.update(key, change);
  }

  async update(key: string, change: (current: T | undefined) => T | undefined): Promise<StoredRecord<T> | undefined> {
    for (;;) {
      const current = this.#records.get(key);
      const next = change(current?.value);
      if (next === undefined) {
        if (current) await this.delete(key);
        return undefined;
      }
      try {
        const revision = await this.put(key, next, { ifRevision: current?.revision ?? null });
        return this.#records.get(key) ?? { key, value: next, revision };
      } catch (error) {
        if (!(error instanceof LoadoutError && error.code === 'STORE_CONFLICT')) throw error;
      }
    }
  }

  async delete(key: string): Promise<boolean> {
    if (!this.#records.has(key)) return false;
    const revision = await this.nextRevision();
    if (!this.#records.delete(key)) return false;
    this.emit({ type: 'change', kind: this.kind, key, op: 'delete', revision, missed: false });
    return true;
  }
}
