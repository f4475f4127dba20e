// Revisions for the files backend. Today's file formats have no room for a revision, so the data
// dir keeps one ledger beside them, `store-revisions.json`: a counter that grows with every write
// through the store, and per record the revision it was written at with a fingerprint of what was
// written. A record whose content no longer matches its fingerprint was changed by a writer that
// does not use the store (an older loadout, a hand edit): it is given the next revision when next
// read, so a conflict with it is still seen. The ledger is changed only under its file lock.
// Kept in memory instead (files mode's own runtime), revisions are this process's: each process
// numbers what it sees, a change made elsewhere is told by its fingerprint, and nothing is written
// beside the files a single user has always had.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Mutex } from 'async-mutex';
import * as z from 'zod';
import { readTextIfExists, withFileLock, writeTextAtomic } from '../config/index.js';
import { LoadoutError } from '../shared/index.js';

/** The ledger's file name in the data dir. */
export const REVISION_LEDGER_FILE = 'store-revisions.json';

// [revision, fingerprint of the record as written; null once deleted]
const LedgerSchema = z.strictObject({
  version: z.literal(1),
  revision: z.number().int().nonnegative(),
  records: z.record(z.string(), z.tuple([z.number().int().positive(), z.string().nullable()])),
});
type Ledger = z.infer<typeof LedgerSchema>;

// Deleted records' revisions kept, newest first, so a watcher can name a delete's revision.
const TOMBSTONES_KEPT = 1_000;

/**
 * The fingerprints one store's layouts marked its records with as they read or wrote them (a
 * record's own text's, or the JSON written), so a record is never serialised again to be told.
 */
export class Fingerprints {
  readonly #known = new WeakMap<object, string>();

  /**
   * A fingerprint of a record's content: equal content, equal fingerprint. A record that came from
   * a text of its own (fromText) has that text's, so it is never serialised again.
   */
  of(value: unknown): string {
    return this.known(value) ?? hashOf(JSON.stringify(value));
  }

  /**
   * Mark `record` as read from, or written as, `text` alone (a file that holds only it): its
   * fingerprint is the text's. Answers `record`. The text's owner must write nothing else in it, so
   * equal texts stay equal content.
   */
  fromText<T extends object>(record: T, text: string): T {
    this.#known.set(record, hashOf(text));
    return record;
  }

  /**
   * Mark `record` as written where a reader will see just it again (a document its owner checks and
   * writes as JSON): its fingerprint, its JSON's, is taken now, and the write need not be read back.
   * Answers `record`.
   */
  readBackAsWritten<T extends object>(record: T): T {
    this.#known.set(record, hashOf(JSON.stringify(record)));
    return record;
  }

  /** The fingerprint `record` was marked with as it was read or written; undefined when it was not. */
  known(record: unknown): string | undefined {
    return typeof record === 'object' && record !== null ? this.#known.get(record) : undefined;
  }
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}

/** The revision ledger of one data dir. */
export class RevisionLedger {
  /** What this store's records were marked with as they were read or written. */
  readonly fingerprints = new Fingerprints();
  readonly #file: string;
  // Writes of this store queue here rather than poll the file lock against each other.
  readonly #mutex = new Mutex();
  readonly #readOnly: boolean;
  /** The ledger when it is kept in memory; undefined when it is the file. */
  readonly #memory: Ledger | undefined;

  /**
   * `readOnly`: never write the ledger; a record it does not know reads at revision 0 (not written
   * through a store). `inMemory`: keep it in this process only; a record it does not know (or
   * knows with other content) is given the next revision as it is read, with no lock taken.
   */
  constructor(dataDir: string, { readOnly = false, inMemory = false }: { readOnly?: boolean; inMemory?: boolean } = {}) {
    this.#file = path.join(dataDir, REVISION_LEDGER_FILE);
    this.#readOnly = readOnly;
    this.#memory = inMemory ? { version: 1, revision: 0, records: {} } : undefined;
  }

  /**
   * The revision `id` was written at if its content still has `fingerprint`; undefined when it does
   * not (or was never written), for the caller to adopt it under its lock. Read-only, there is
   * nothing to adopt: such a record reads at revision 0, with no lock taken. In memory, it is
   * adopted at once: this process's revisions need no other process's lock.
   */
  async revisionOf(id: string, fingerprint: string | null): Promise<number | undefined> {
    const ledger = await this.#read();
    const entry = ledger.records[id];
    if (entry && entry[1] === fingerprint) return entry[0];
    if (this.#memory) return this.#change((memory) => this.#next(memory, id, fingerprint));
    return this.#readOnly ? 0 : undefined;
  }

  /** The revision of `id` as it is now (`null`: deleted), given the next one when the ledger has another content for it. Call under the record's own lock. */
  async adopt(id: string, fingerprint: string | null): Promise<number> {
    const known = await this.revisionOf(id, fingerprint);
    if (known !== undefined) return known;
    return this.#change((ledger) => {
      const entry = ledger.records[id];
      return entry && entry[1] === fingerprint ? entry[0] : this.#next(ledger, id, fingerprint);
    });
  }

  /** Take the next revision for a write of `id` with `fingerprint` (`null`: a delete). Call under the record's own lock. */
  record(id: string, fingerprint: string | null): Promise<number> {
    return this.#change((ledger) => this.#next(ledger, id, fingerprint));
  }

  /** Take the next revision for each write of `fingerprints` (id → fingerprint), in one change of the ledger. */
  recordAll(fingerprints: ReadonlyMap<string, string | null>): Promise<void> {
    return this.#change((ledger) => {
      for (const [id, fingerprint] of fingerprints) this.#next(ledger, id, fingerprint);
      return ledger.revision;
    }).then(() => undefined);
  }

  /** Take the next revision for a record the ledger does not keep (a session held in memory). */
  bump(): Promise<number> {
    return this.#change((ledger) => ++ledger.revision);
  }

  #next(ledger: Ledger, id: string, fingerprint: string | null): number {
    const revision = ++ledger.revision;
    delete ledger.records[id];
    ledger.records[id] = [revision, fingerprint];
    return revision;
  }

  async #change(change: (ledger: Ledger) => number): Promise<number> {
    if (this.#readOnly) throw new LoadoutError('INVALID_ARGUMENT', `${this.#file} is read-only here: the store was opened read-only`);
    if (this.#memory) {
      const revision = change(this.#memory);
      pruned(this.#memory);
      return revision;
    }
    return this.#mutex.runExclusive(() =>
      withFileLock(this.#file, async () => {
        const ledger = await this.#read();
        const revision = change(ledger);
        await writeTextAtomic(this.#file, `${JSON.stringify(pruned(ledger))}\n`);
        return revision;
      }),
    );
  }

  async #read(): Promise<Ledger> {
    if (this.#memory) return this.#memory;
    const text = await readTextIfExists(this.#file);
    if (text === undefined) return { version: 1, revision: 0, records: {} };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = LedgerSchema.safeParse(json);
    if (!parsed.success) {
      throw new LoadoutError(
        'STATE_INVALID',
        `${this.#file} is not a revision ledger; delete it (revisions start again, nothing else is lost) and retry`,
      );
    }
    return parsed.data;
  }
}

// Records are kept in write order (#next re-inserts), so the oldest tombstones come first.
function pruned(ledger: Ledger): Ledger {
  const tombstones = Object.keys(ledger.records).filter((id) => ledger.records[id]![1] === null);
  for (const id of tombstones.slice(0, Math.max(0, tombstones.length - TOMBSTONES_KEPT))) delete ledger.records[id];
  return ledger;
}
