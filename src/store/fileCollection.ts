// The collections of the files backend: each kind's records in its layout (fileLayouts.ts), with
// revisions from the data dir's ledger (revisionLedger.ts). Every write is a read-modify-write
// under the lock of the file that holds the record, so `ifRevision` is checked against what the
// file holds at that moment, and update() needs no retries. A revision is recorded after its
// write, still under that lock: a reader who sees the new content waits for it (RevisionLedger.adopt).
import type * as z from 'zod';
import { OAuthRecordSchema, type OAuthFileRead, type OAuthRecord } from '../config/index.js';
import { LoadoutError, firstIssueText } from '../shared/index.js';
import type { FileLayout, Outcome, Step } from './fileLayouts.js';
import { conflict, validKey, type StoreKind } from './records.js';
import type { RevisionLedger } from './revisionLedger.js';
import type { ListedRecord, OAuthCollection, OAuthRead, PutOptions, RecordCollection, StoredRecord } from './store.js';

/**
 * A record as a write left it: the value a reader will now see, or (`asWritten`) the value written
 * itself, when its layout marked it as what a reader will see (Fingerprints: fromText, readBackAsWritten).
 */
type Written<Read, Write> = { asWritten: false; value: Read; revision: number } | { asWritten: true; value: Write; revision: number };

/**
 * What a layout reads for a record whose file it cannot read (a toolset file edited into
 * nonsense): kept per record, so the others still read. Reading that record throws `failure`.
 */
export class UnreadableRecord {
  constructor(readonly failure: Error) {}
}

/** What a change writes, seeing the record (with its revision): a value, a delete, or nothing. */
type Decide<Read, Write> = Decision<Read, Write>['decide'];

/** One record's change in changeAll(). */
interface Decision<Read, Write> {
  key: string;
  decide(this: void, current: { value: Read; revision: number } | undefined): { write: Write } | 'delete' | 'keep';
}

/** One record of FileRecords.list(): read, or unreadable with why. */
type Listed<Read> =
  { kind: 'ok'; key: string; value: Read; revision: number } | { kind: 'unreadable'; key: string; where: string; failure: Error };

/** The records of one kind as their files hold them, each with its revision. */
export class FileRecords<Read, Write> {
  constructor(
    readonly kind: StoreKind,
    readonly layout: FileLayout<Read, Write>,
    private readonly ledger: RevisionLedger,
    /** Throws when the store is closed, or (`writing`) opened read-only. */
    private readonly guard: (writing: boolean) => void,
  ) {}

  /** The fingerprint of `value`, one of these records, as this store tells content apart. */
  fingerprintOf(value: unknown): string {
    return this.ledger.fingerprints.of(value);
  }

  /** The record and its revision; undefined when there is none. */
  async get(key: string): Promise<{ value: Read; revision: number } | undefined> {
    this.#check(key, false);
    const value = await this.layout.read(key);
    if (value === undefined) return undefined;
    const record = value instanceof UnreadableRecord ? value : await this.#withRevision(key, value);
    if (record instanceof UnreadableRecord) throw record.failure;
    return record;
  }

  /** Every record, by key: each read, or unreadable with why. */
  async list(): Promise<Array<Listed<Read>>> {
    this.guard(false);
    const records: Array<Listed<Read>> = [];
    for (const [key, value] of [...(await this.layout.readAll())].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const record = value instanceof UnreadableRecord ? value : await this.#withRevision(key, value);
      if (record instanceof UnreadableRecord)
        records.push({ kind: 'unreadable', key, where: this.layout.fileOf(key), failure: record.failure });
      else if (record) records.push({ kind: 'ok', key, ...record });
    }
    return records;
  }

  /** The revision of a record that is gone (a delete's), adopted if the ledger holds another. */
  deletedRevision(key: string): Promise<number> {
    return this.layout.transact(key, (current) =>
      Promise.resolve({
        change: 'keep',
        result: () => this.ledger.adopt(this.#id(key), current === undefined ? null : this.ledger.fingerprints.of(current)),
      }),
    );
  }

  /**
   * Under the record's lock: `decide` sees it (with its revision) and answers what to write, or
   * undefined to delete it; returns the revision written (undefined when nothing was, or it was deleted).
   */
  async change(key: string, decide: Decide<Read, Write>): Promise<Written<Read, Write> | undefined> {
    this.#check(key, true);
    const { work } = this.#step(key, decide);
    return this.layout.transact(key, work);
  }

  /** change() of each distinct key of `decisions`: the records of one document file changed under its one lock, the file written once. */
  async changeAll(decisions: ReadonlyArray<Decision<Read, Write>>): Promise<void> {
    for (const { key } of decisions) this.#check(key, true);
    await this.layout.transactEach(decisions.map(({ key, decide }) => this.#step(key, decide)));
  }

  // A change of `key`: its current value with its revision to `decide`, the revision written recorded after.
  #step(key: string, decide: Decide<Read, Write>): Step<Read, Write, Written<Read, Write> | undefined> {
    const work = async (value: Read | undefined): Promise<Outcome<Write, Written<Read, Write> | undefined>> => {
      const current =
        value === undefined ? undefined : { value, revision: await this.ledger.adopt(this.#id(key), this.ledger.fingerprints.of(value)) };
      const change = decide(current);
      return {
        change,
        result: async () => {
          if (change === 'keep') return undefined;
          if (change === 'delete') {
            if (current) await this.ledger.record(this.#id(key), null);
            return undefined;
          }
          // Marked by its layout as read back as written (Fingerprints: fromText, readBackAsWritten): its fingerprint is known.
          const fingerprint = this.ledger.fingerprints.known(change.write);
          if (fingerprint !== undefined)
            return { asWritten: true, value: change.write, revision: await this.ledger.record(this.#id(key), fingerprint) };
          // What a reader will see (the file's own normal form), fingerprinted as it will be read.
          const written = await this.layout.read(key);
          if (written === undefined) throw new LoadoutError('STATE_INVALID', `${this.layout.fileOf(key)} was not written`);
          return {
            asWritten: false,
            value: written,
            revision: await this.ledger.record(this.#id(key), this.ledger.fingerprints.of(written)),
          };
        },
      };
    };
    return { key, work };
  }

  /** Write every record of `records` through the layout's bulk write, then take their revisions in one change of the ledger. */
  async putAll(records: ReadonlyMap<string, Write>): Promise<void> {
    for (const key of records.keys()) this.#check(key, true);
    if (!records.size) return;
    await this.layout.putAll(records);
    // What a reader will see (the file's own normal form), fingerprinted as it will be read.
    const written = await this.layout.readAll();
    await this.ledger.recordAll(
      new Map([...records.keys()].map((key) => [this.#id(key), written.has(key) ? this.ledger.fingerprints.of(written.get(key)) : null])),
    );
  }

  /** Remove the record; false when there was none. */
  async delete(key: string): Promise<boolean> {
    let existed = false;
    await this.change(key, (current) => {
      existed = current !== undefined;
      return existed ? 'delete' : 'keep';
    });
    return existed;
  }

  // `value` as read, with its revision: adopted under its lock when the ledger knows other content.
  async #withRevision(key: string, value: Read): Promise<{ value: Read; revision: number } | UnreadableRecord | undefined> {
    const revision = await this.ledger.revisionOf(this.#id(key), this.ledger.fingerprints.of(value));
    return revision === undefined ? this.#adopted(key) : { value, revision };
  }

  // The content changed without the store (or a write is in progress): read it again under its lock.
  #adopted(key: string): Promise<{ value: Read; revision: number } | UnreadableRecord | undefined> {
    return this.layout.transact(key, (value) =>
      Promise.resolve({
        change: 'keep',
        result: async () => {
          if (value === undefined) return undefined;
          if (value instanceof UnreadableRecord) return value;
          return { value, revision: await this.ledger.adopt(this.#id(key), this.ledger.fingerprints.of(value)) };
        },
      }),
    );
  }

  #check(key: string, writing: boolean): void {
    this.guard(writing);
    validKey(this.kind, key);
  }

  #id(key: string): string {
    return `${this.kind}/${key}`;
  }
}

/**
 * A plain kind over its files: records checked with the kind's schema (kept as given where the kind
 * says so). `checkedOnRead`: its layout reads only records it checked with that schema (and
 * normalised), so they are not checked again. A record a write left as written is not read back.
 */
export class FileCollection<T> implements RecordCollection<T> {
  readonly #records: FileRecords<unknown, T>;
  readonly #schema: z.ZodType<T>;
  readonly #asGiven: boolean;
  readonly #checkedOnRead: boolean;

  constructor(records: FileRecords<unknown, T>, schema: z.ZodType<T>, options: { asGiven: boolean; checkedOnRead: boolean }) {
    this.#records = records;
    this.#schema = schema;
    this.#asGiven = options.asGiven;
    this.#checkedOnRead = options.checkedOnRead;
  }

  async get(key: string): Promise<StoredRecord<T> | undefined> {
    const record = await this.#records.get(key);
    return record && { key, value: this.#parse(key, record.value), revision: record.revision };
  }

  async list(): Promise<Array<StoredRecord<T>>> {
    return (await this.listEach()).map((listed) => {
      if (listed.kind === 'unreadable') throw listed.failure;
      return listed.record;
    });
  }

  async listEach(): Promise<Array<ListedRecord<T>>> {
    return (await this.#records.list()).map((listed): ListedRecord<T> => {
      if (listed.kind === 'unreadable') return listed;
      return { kind: 'ok', record: { key: listed.key, value: this.#parse(listed.key, listed.value), revision: listed.revision } };
    });
  }

  async put(key: string, value: T, options: PutOptions = {}): Promise<number> {
    const write = this.#valid(key, value);
    const written = await this.#records.change(key, (current) => {
      if (options.ifRevision !== undefined && (current?.revision ?? null) !== options.ifRevision)
        throw conflict(this.#records.kind, key, options.ifRevision);
      return { write };
    });
    return written!.revision;
  }

  async update(key: string, change: (current: T | undefined) => T | undefined): Promise<StoredRecord<T> | undefined> {
    const written = await this.#records.change(key, this.#decide(key, change));
    return written && this.#read(key, written);
  }

  updateAll(changes: ReadonlyMap<string, (current: T | undefined) => T | undefined>): Promise<void> {
    return this.#records.changeAll([...changes].map(([key, change]) => ({ key, decide: this.#decide(key, change) })));
  }

  putAll(records: ReadonlyArray<{ key: string; value: T }>): Promise<void> {
    return this.#records.putAll(new Map(records.map(({ key, value }) => [key, this.#valid(key, value)])));
  }

  delete(key: string): Promise<boolean> {
    return this.#records.delete(key);
  }

  // An update's decision: `change` of the record as read; undefined deletes it.
  #decide(key: string, change: (current: T | undefined) => T | undefined): Decide<unknown, T> {
    return (current) => {
      const next = change(current && this.#parse(key, current.value));
      if (next === undefined) return current ? 'delete' : 'keep';
      return { write: this.#valid(key, next) };
    };
  }

  // A write's record as a reader sees it: one left as written is the value checked before the write.
  #read(key: string, written: Written<unknown, T>): StoredRecord<T> {
    return { key, value: written.asWritten ? written.value : this.#parse(key, written.value), revision: written.revision };
  }

  #valid(key: string, value: T): T {
    const parsed = this.#schema.safeParse(value);
    if (!parsed.success)
      throw new LoadoutError('INVALID_ARGUMENT', `${this.#records.kind} '${key}' not saved: ${firstIssueText(parsed.error)}`);
    return this.#asGiven ? value : parsed.data;
  }

  #parse(key: string, value: unknown): T {
    if (value instanceof UnreadableRecord) throw value.failure;
    // Checked by the layout as it read it: the schema's own output already.
    if (this.#checkedOnRead) return value as T;
    const parsed = this.#schema.safeParse(value);
    if (!parsed.success) {
      throw new LoadoutError(
        'STATE_INVALID',
        `${this.#records.kind} '${key}' in ${this.#records.layout.fileOf(key)} is not valid: ${firstIssueText(parsed.error)}`,
      );
    }
    return this.#asGiven ? (value as T) : parsed.data;
  }
}

/**
 * OAuth records over their files, as files mode keeps them today: plain JSON, mode 0600, never
 * encrypted (encryption at rest is the Postgres backend's). An unreadable file is reported per
 * server; a put or an update replaces it, as a new login does today.
 */
export class FileOAuthCollection implements OAuthCollection {
  readonly #records: FileRecords<OAuthFileRead, OAuthRecord>;

  constructor(records: FileRecords<OAuthFileRead, OAuthRecord>) {
    this.#records = records;
  }

  async get(server: string): Promise<OAuthRead | undefined> {
    const record = await this.#records.get(server);
    return record && { key: server, ...record.value, revision: record.revision };
  }

  async list(): Promise<OAuthRead[]> {
    // An OAuth file that cannot be read is read as such (OAuthFileRead), never an UnreadableRecord.
    return (await this.#records.list()).flatMap((record) =>
      record.kind === 'ok' ? [{ key: record.key, ...record.value, revision: record.revision }] : [],
    );
  }

  async put(server: string, record: OAuthRecord, options: PutOptions = {}): Promise<number> {
    const write = validOAuth(server, record);
    const written = await this.#records.change(server, (current) => {
      if (options.ifRevision !== undefined && (current?.revision ?? null) !== options.ifRevision)
        throw conflict('oauth tokens', server, options.ifRevision);
      return { write };
    });
    return written!.revision;
  }

  async update(server: string, change: (current: OAuthRecord | undefined) => OAuthRecord | undefined): Promise<OAuthRead | undefined> {
    const written = await this.#records.change(server, (current) => {
      const next = change(current?.value.state === 'readable' ? current.value.value : undefined);
      if (next === undefined) return current ? 'delete' : 'keep';
      return { write: validOAuth(server, next) };
    });
    if (!written) return undefined;
    return {
      key: server,
      ...(written.asWritten ? { state: 'readable', value: written.value } : written.value),
      revision: written.revision,
    };
  }

  delete(server: string): Promise<boolean> {
    return this.#records.delete(server);
  }
}

function validOAuth(server: string, record: OAuthRecord): OAuthRecord {
  const parsed = OAuthRecordSchema.safeParse(record);
  if (!parsed.success) throw new LoadoutError('INVALID_ARGUMENT', `oauth tokens of '${server}' not saved: ${firstIssueText(parsed.error)}`);
  return parsed.data;
}
