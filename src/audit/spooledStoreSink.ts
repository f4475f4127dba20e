// The trail's sink in Postgres mode: each batch goes to the spool first (auditSpool.ts), then the
// spool is sent to the store's table, oldest segment first, each removed once the store has it;
// while the store cannot take records they wait there, sent again with backoff, and a batch sent
// twice (its answer lost with the connection) is kept once by the records' ids. The files-mode
// twin is the day files (auditSinks.ts).
import { errorMessage, type Logger } from '../shared/index.js';
import type { AuditTable } from '../store/index.js';
import type { AuditSink } from './auditSinks.js';
import type { AuditSpool, SpooledRecord } from './auditSpool.js';
import { auditRowOf } from './storedTrail.js';

/** The first wait before the spool is sent again after the store refused it, and the longest. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 15_000;

/** What the trail in Postgres mode counts, for `/metrics`. */
export interface SpoolFigures {
  /** Records in the spool now, not yet in the store. */
  readonly spooledRecords: () => number;
  /** Records dropped since start: the spool was full (or could not be written) and the store could not take them. */
  readonly droppedRecords: () => number;
}

/** A sink of the store's audit table behind `spool`; rows past `retentionDays` (0 keeps them all) are deleted once a UTC day. */
export class SpooledStoreSink implements AuditSink, SpoolFigures {
  readonly name = 'store audit_records';
  readonly #table: AuditTable;
  readonly #spool: AuditSpool;
  readonly #retentionDays: number;
  readonly #log: Logger;
  // The records of the segments this process wrote while sending keeps up: no read back.
  readonly #fresh = new Map<string, readonly SpooledRecord[]>();
  #sending: Promise<void> | undefined;
  #again = false;
  #retryMs = RETRY_FIRST_MS;
  #retry: NodeJS.Timeout | undefined;
  // Since the store last refused a batch (reported once), until it takes the spool again.
  #away = false;
  #sentSinceAway = 0;
  #full = false;
  // The spool could not be written (reported once, until it can again).
  #unwritable = false;
  #dropped = 0;
  #lastDay: string | undefined;
  #closed = false;

  constructor(table: AuditTable, spool: AuditSpool, retentionDays: number, logger: Logger) {
    this.#table = table;
    this.#spool = spool;
    this.#retentionDays = retentionDays;
    this.#log = logger.child({ mod: 'audit' });
    // What a stopped or killed process left in the spool goes first.
    void this.#send();
  }

  readonly spooledRecords = (): number => this.#spool.records;
  readonly droppedRecords = (): number => this.#dropped;

  async write(batch: Parameters<AuditSink['write']>[0]): Promise<void> {
    const records = batch.flatMap((day) => day.records);
    let kept: readonly SpooledRecord[];
    try {
      const appended = await this.#spool.append(records);
      // While the store is away a long outage keeps them on disk only.
      if (appended.segment && !this.#away) this.#fresh.set(appended.segment.name, appended.kept);
      this.#countDropped(appended.dropped);
      kept = appended.kept;
      this.#unwritable = false;
    } catch (error) {
      // No spool (a full disk, a folder it may not write): the store, straight, is all that is left.
      if (!this.#unwritable)
        this.#log.error(
          { dir: this.#spool.dir, err: errorMessage(error) },
          'the audit spool cannot be written; records go to the store unspooled',
        );
      this.#unwritable = true;
      await this.#table.append(records.map(({ record, json }) => auditRowOf(record, json))).catch(() => this.#countDropped(records.length));
      return;
    }
    if (kept.length > 0 && this.#retry === undefined) void this.#send();
  }

  /** Send what is spooled once more (no retry after); settles when it is sent or left in the spool for the next start. */
  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    return this.#send();
  }

  #countDropped(records: number): void {
    if (records === 0) {
      if (this.#full) this.#log.warn({ dir: this.#spool.dir }, 'the audit spool has room again');
      this.#full = false;
      return;
    }
    this.#dropped += records;
    if (!this.#full)
      this.#log.error(
        { dir: this.#spool.dir, droppedRecords: records },
        'the audit spool is full and the store cannot take records: new records are dropped (counted in loadout.audit.records.dropped)',
      );
    this.#full = true;
  }

  // One send at a time; asked while one runs, it runs once more after it (unless the store refused).
  #send(): Promise<void> {
    if (this.#sending) {
      this.#again = true;
      return this.#sending;
    }
    this.#sending = (async () => {
      do {
        this.#again = false;
        await this.#sendSpooled().catch((error: unknown) =>
          this.#log.error({ dir: this.#spool.dir, err: errorMessage(error) }, 'the audit spool cannot be read; its records stay there'),
        );
      } while (this.#again && !this.#away);
    })().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  async #sendSpooled(): Promise<void> {
    for (const segment of await this.#spool.segments()) {
      const records = this.#fresh.get(segment.name) ?? (await this.#spool.read(segment));
      const newest = records.at(-1)?.record.time.slice(0, 10);
      // A day this process has not seen yet: the statement also expires old rows, unless another replica has today.
      const expire = this.#retentionDays > 0 && newest !== undefined && newest !== this.#lastDay;
      try {
        await this.#table.append(
          records.map(({ record, json }) => auditRowOf(record, json)),
          expire ? { retentionDays: this.#retentionDays } : {},
        );
      } catch (error) {
        this.#refused(error);
        return;
      }
      this.#lastDay = newest;
      this.#fresh.delete(segment.name);
      await this.#spool.remove(segment);
      if (this.#away) this.#sentSinceAway += records.length;
    }
    if (!this.#away) return;
    this.#log.warn(
      { sink: this.name, spooledRecords: this.#sentSinceAway },
      'audit records reach the store again; the spooled ones are written',
    );
    this.#away = false;
    this.#sentSinceAway = 0;
    this.#retryMs = RETRY_FIRST_MS;
  }

  // The store refused a segment: it and every later one wait in the spool, sent again after a backoff.
  #refused(error: unknown): void {
    if (!this.#away)
      this.#log.error(
        { sink: this.name, dir: this.#spool.dir, err: errorMessage(error) },
        'the store cannot take audit records; they wait in the spool and are written once it can',
      );
    this.#away = true;
    this.#fresh.clear();
    if (this.#closed) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#send();
    }, this.#retryMs).unref();
    this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
  }
}
