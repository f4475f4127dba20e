// A replica's durable copy, in its data dir, of the store records it serves (COPIED_KINDS): kept on
// every successful read and write of them, and read only while the store is away, so a replica
// restarted before or during an outage serves what it served before. The store always wins while
// it answers; the copy never does, and a write-through older than the copy's revision is dropped.
import { createHash } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import { readTextIfExists, writeTextAtomic } from '../config/index.js';
import { errorMessage, type Logger } from '../shared/index.js';
import { DOCUMENT_KINDS, type RecordOf } from './records.js';
import type { StoredRecord } from './store.js';

/**
 * What a replica needs to serve a principal with the store away: the equipped records (each
 * principal's, and @last-stop, what a new session gets), the saved toolsets they name, the
 * catalog's definitions those toolsets' tools come from, and the optimization records whose
 * promoted descriptions the tools are listed with. Nothing else: a change (an equip, a save, a
 * discovery) is refused while the store is away, so what is not served needs no copy.
 */
export const COPIED_KINDS = ['equipped', 'toolsets', 'catalog', 'optimization'] as const;
/** A kind the local copy keeps. */
export type CopiedKind = (typeof COPIED_KINDS)[number];

/** The folder of the data dir the copies live in, one folder per store (its host, port and database). */
export const LOCAL_COPY_DIR = 'store-copy';

/** One record's file: its key and revision, and its value, or `absent` when the store had none (a principal never equipped). */
const CopyFileSchema = z.strictObject({
  key: z.string(),
  revision: z.number().int().nonnegative(),
  value: z.unknown().optional(),
  absent: z.literal(true).optional(),
});

// A listing of the kind was kept whole (every record the store had then): a list may be answered from it.
const LISTED_MARK = 'listed';
const FILE_MODE = 0o600;
// The revision noted for a record kept absent: below every real one.
const ABSENT = -1;

/** What the copy holds of a record: the record, or the store's word that there was none. */
export type CopiedRecord<T> = { absent: false; record: StoredRecord<T> } | { absent: true };

/** The local copy of one store's records, by kind; each kind's revisions are read on its first use. */
export class LocalCopy {
  readonly #dir: string;
  readonly #log: Logger;
  /** kind → key → the revision kept (ABSENT for a record kept absent), once the kind's folder is read. */
  readonly #revisions = new Map<CopiedKind, Promise<Map<string, number>>>();

  /** `dir`: this store's folder (see copyDirOf). */
  constructor(dir: string, logger: Logger) {
    this.#dir = dir;
    this.#log = logger.child({ mod: 'store-copy' });
  }

  /** Whether the copy holds any record (a replica that has served from this store before). */
  async holdsAny(): Promise<boolean> {
    for (const kind of COPIED_KINDS) if ((await this.#kept(kind)).size > 0) return true;
    return false;
  }

  /** The record of `key` as kept, or undefined when the copy knows nothing of it. */
  async get<K extends CopiedKind>(kind: K, key: string): Promise<CopiedRecord<RecordOf<K>> | undefined> {
    if (!(await this.#kept(kind)).has(key)) return undefined;
    return this.#read(kind, this.#file(kind, key));
  }

  /** Every record of `kind` as kept, if a whole listing was kept (else undefined: the copy may lack some). */
  async list<K extends CopiedKind>(kind: K): Promise<Array<StoredRecord<RecordOf<K>>> | undefined> {
    if ((await readTextIfExists(path.join(this.#dir, kind, LISTED_MARK))) === undefined) return undefined;
    const records: Array<StoredRecord<RecordOf<K>>> = [];
    for (const key of [...(await this.#kept(kind)).keys()].sort()) {
      const kept = await this.#read(kind, this.#file(kind, key));
      if (kept && !kept.absent) records.push(kept.record);
    }
    return records;
  }

  /**
   * Keep what the store answered for `key` (`undefined`: it has none). A record older than the one
   * kept is dropped (two answers may come back out of order); the store's word that there is none
   * is kept whatever came before it.
   */
  async keep<K extends CopiedKind>(kind: K, key: string, record: StoredRecord<RecordOf<K>> | undefined): Promise<void> {
    const revisions = await this.#kept(kind);
    const kept = revisions.get(key);
    const revision = record?.revision ?? ABSENT;
    // The same revision is the same record: nothing to write (the catalog is read whole at every start).
    if (kept === revision || (record && kept !== undefined && kept > record.revision)) return;
    revisions.set(key, revision);
    const text = JSON.stringify(record ? { key, revision, value: record.value } : { key, revision: 0, absent: true });
    await this.#write(this.#file(kind, key), text);
  }

  /** Keep a whole listing of `kind`: every record the store has, and none it no longer has. */
  async keepListing<K extends CopiedKind>(kind: K, records: ReadonlyArray<StoredRecord<RecordOf<K>>>): Promise<void> {
    const revisions = await this.#kept(kind);
    const listed = new Set(records.map((record) => record.key));
    for (const record of records) await this.keep(kind, record.key, record);
    for (const key of [...revisions.keys()]) {
      if (listed.has(key)) continue;
      revisions.delete(key);
      await rm(this.#file(kind, key), { force: true }).catch((error: unknown) => this.#failed(kind, error));
    }
    await this.#write(path.join(this.#dir, kind, LISTED_MARK), '');
  }

  /** The copy of `keys` may be behind the store (written without a revision to keep): forget them until read again. */
  async forget(kind: CopiedKind, keys: Iterable<string>): Promise<void> {
    const revisions = await this.#kept(kind);
    await rm(path.join(this.#dir, kind, LISTED_MARK), { force: true }).catch((error: unknown) => this.#failed(kind, error));
    for (const key of keys) {
      revisions.delete(key);
      await rm(this.#file(kind, key), { force: true }).catch((error: unknown) => this.#failed(kind, error));
    }
  }

  #kept(kind: CopiedKind): Promise<Map<string, number>> {
    let kept = this.#revisions.get(kind);
    if (!kept) this.#revisions.set(kind, (kept = this.#readRevisions(kind)));
    return kept;
  }

  async #readRevisions(kind: CopiedKind): Promise<Map<string, number>> {
    const revisions = new Map<string, number>();
    const names = await readdir(path.join(this.#dir, kind)).catch(() => [] as string[]);
    for (const name of names.filter((name) => name.endsWith('.json'))) {
      const file = path.join(this.#dir, kind, name);
      const parsed = await this.#parse(file);
      if (parsed && this.#file(kind, parsed.key) === file) revisions.set(parsed.key, parsed.absent ? ABSENT : parsed.revision);
    }
    return revisions;
  }

  async #read<K extends CopiedKind>(kind: K, file: string): Promise<CopiedRecord<RecordOf<K>> | undefined> {
    const parsed = await this.#parse(file);
    if (!parsed) return undefined;
    if (parsed.absent) return { absent: true };
    const { schema, asGiven } = DOCUMENT_KINDS[kind];
    const checked = schema.safeParse(parsed.value);
    if (!checked.success) {
      this.#log.warn({ file }, 'a record of the local copy does not match its kind; ignored');
      return undefined;
    }
    // As the store keeps it: a record kept as given (what servers sent) in its own key order.
    const value = (asGiven ? parsed.value : checked.data) as RecordOf<K>;
    return { absent: false, record: { key: parsed.key, revision: parsed.revision, value } };
  }

  async #parse(file: string): Promise<z.infer<typeof CopyFileSchema> | undefined> {
    try {
      const text = await readTextIfExists(file);
      return text === undefined ? undefined : CopyFileSchema.parse(JSON.parse(text));
    } catch (error) {
      this.#log.warn({ file, err: errorMessage(error) }, 'unreadable record in the local copy; ignored');
      return undefined;
    }
  }

  // A write that fails leaves the copy behind, never the store's answer unanswered: logged only.
  async #write(file: string, text: string): Promise<void> {
    try {
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      await writeTextAtomic(file, text, { mode: FILE_MODE });
    } catch (error) {
      this.#log.warn({ file, err: errorMessage(error) }, 'could not keep a record in the local copy');
    }
  }

  #failed(kind: CopiedKind, error: unknown): void {
    this.#log.warn({ kind, err: errorMessage(error) }, 'could not forget a record of the local copy');
  }

  // Keys are any text up to 200 characters: a file is named by its key's digest, and holds the key.
  #file(kind: CopiedKind, key: string): string {
    return path.join(this.#dir, kind, `${createHash('sha256').update(key).digest('hex').slice(0, 40)}.json`);
  }
}

/** The folder of the data dir `dataDir` that keeps the copy of the store at `href` (credentials left out of its name). */
export function copyDirOf(dataDir: string, href: string): string {
  const url = new URL(href);
  const place = `${url.hostname}:${url.port || 5432}${url.pathname}`;
  return path.join(dataDir, LOCAL_COPY_DIR, createHash('sha256').update(place).digest('hex').slice(0, 16));
}
