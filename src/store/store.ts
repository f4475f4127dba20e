// The store's contract: typed collections for every kind loadout keeps, the change feed, and what
// only a store the replicas of a fleet share has (`fleet`: the audit table, shared rate limits,
// heartbeats, a migrated schema). Backends (Postgres, files) implement it, and one contract test
// suite runs against each.
import type { OAuthRecord } from '../config/index.js';
import type { SchemaState } from './migrations.js';
import type { DocumentKind, HeardReplica, RecordOf, ReplicaHeartbeat, StoreKind } from './records.js';

/** What a receiver hears: one committed change (`missed`: read from the log after a reconnect), or "re-read everything". */
export type StoreChange =
  | { type: 'change'; kind: StoreKind; key: string; op: 'put' | 'delete'; revision: number; missed: boolean }
  | { type: 'resync'; reason: string };

/** A record with its key and revision (a number that grows with every write of any record). */
export interface StoredRecord<T> {
  key: string;
  value: T;
  revision: number;
}

/** `ifRevision`: write only if the record is still at that revision (`null`: only if there is none); else STORE_CONFLICT. */
export interface PutOptions {
  ifRevision?: number | null;
}

/** One record of a listing: read, or (a file edited into nonsense, in the files backend) unreadable, with why. */
export type ListedRecord<T> =
  | { kind: 'ok'; record: StoredRecord<T> }
  /** `where`: where the record is kept (its file). */
  | { kind: 'unreadable'; key: string; where: string; failure: Error };

/** The records of one kind, by key. */
export interface RecordCollection<T> {
  get(key: string): Promise<StoredRecord<T> | undefined>;
  /** Every record, by key; throws when one cannot be read. */
  list(): Promise<Array<StoredRecord<T>>>;
  /** Every record, by key, one that cannot be read reported as such and the others still read. */
  listEach(): Promise<Array<ListedRecord<T>>>;
  /** Validate and write; returns the new revision. Acknowledged means committed. */
  put(key: string, value: T, options?: PutOptions): Promise<number>;
  /** Validate and write many records, unconditionally (a copy between stores); a backend may write them together (files: a document file once). */
  putAll(records: ReadonlyArray<{ key: string; value: T }>): Promise<void>;
  /** Read-modify-write that retries on a concurrent write; `undefined` from `change` deletes. */
  update(key: string, change: (current: T | undefined) => T | undefined): Promise<StoredRecord<T> | undefined>;
  /**
   * update() of several records, `change` by key, each seeing its record as kept then. Files: the
   * records of one document file (catalog.json) are changed under its one lock, the file read and
   * written once for all of them; Postgres: one update per record.
   */
  updateAll(changes: ReadonlyMap<string, (current: T | undefined) => T | undefined>): Promise<void>;
  /** Remove; false when there was none. */
  delete(key: string): Promise<boolean>;
}

/** An OAuth record as read: decrypted, or unreadable with the reason (a wrong LOADOUT_SECRET_KEY, damage). */
export type OAuthRead =
  | { key: string; state: 'readable'; value: OAuthRecord; revision: number }
  | { key: string; state: 'unreadable'; reason: string; revision: number };

/** OAuth records by server, encrypted at rest; an unreadable record is reported, never overwritten by put/update. */
export interface OAuthCollection {
  get(server: string): Promise<OAuthRead | undefined>;
  list(): Promise<OAuthRead[]>;
  put(server: string, record: OAuthRecord, options?: PutOptions): Promise<number>;
  update(server: string, change: (current: OAuthRecord | undefined) => OAuthRecord | undefined): Promise<OAuthRead | undefined>;
  delete(server: string): Promise<boolean>;
}

/** One audit record as the table keeps it: the columns it is filtered by, and the record's JSON. */
export interface AuditRow {
  /** When the request arrived (ISO 8601). */
  readonly at: string;
  readonly principalId: string | null;
  readonly principalSubject: string | null;
  readonly server: string | null;
  /** The record's id: a row whose id the table holds already is not written again. */
  readonly recordId: string | null;
  readonly replica: string | null;
  /** The tool's own name, and the name it was called by. */
  readonly tool: string | null;
  readonly exposedTool: string | null;
  /** The record, as JSON text. */
  readonly json: string;
}

/** Which rows to read: each given field must match. */
export interface AuditRowFilter {
  /** A principal's subject or id. */
  readonly principal?: string;
  readonly server?: string;
  /** The tool's own name or the name it was called by. */
  readonly tool?: string;
  readonly replica?: string;
  /** Only rows at or after this time (ms since the epoch). */
  readonly sinceMs?: number;
}

/** The audit trail kept in the store (Postgres mode). */
export interface AuditTable {
  /**
   * Write `rows` in one statement; a row whose record id is in the table already is left out, so a
   * batch written twice is kept once. With `retentionDays` (> 0), rows from before the last
   * `retentionDays` UTC days are deleted in that statement too, unless a replica has done so today.
   */
  append(rows: readonly AuditRow[], options?: { retentionDays?: number }): Promise<void>;
  /** The JSON of the rows `filter` selects, oldest first. */
  read(filter: AuditRowFilter): Promise<string[]>;
}

/** Token buckets shared by the replicas (Postgres mode): the rate limits of `limits:` counted once for the fleet. */
export interface LimitBuckets {
  /**
   * Refill the buckets of `keys` (limits in calls a minute, by position) up to now and, with
   * `count`, take one call from each if every one holds one (else from none). Returns, per key,
   * the ms until its bucket holds a call (0: it held one). One statement, atomic across replicas.
   */
  take(keys: readonly string[], callsPerMinute: readonly number[], count: boolean): Promise<number[]>;
}

/** The replicas' heartbeats (Postgres mode): who serves on this store now. */
export interface ReplicaTable {
  /** Write this replica's heartbeat, stamped with the database's now(). */
  beat(heartbeat: ReplicaHeartbeat): Promise<void>;
  /** The replicas heard from within the last `withinMs`, oldest start first (older rows are deleted). */
  heard(withinMs: number): Promise<HeardReplica[]>;
  /** Remove a replica's heartbeat (it stops). */
  forget(id: string): Promise<void>;
}

/** What only a store the replicas of a fleet share (Postgres) has. */
export interface StoreFleet {
  /** The audit trail's table (files mode: the audit layer keeps day files instead). */
  readonly audit: AuditTable;
  /** Rate-limit buckets the replicas share (files mode: each process counts its own). */
  readonly limits: LimitBuckets;
  /** The replicas' heartbeats (files mode: one process, nothing to list). */
  readonly replicas: ReplicaTable;
  /** Where the schema stands (files have none: each file carries its own format version, read by its owner). */
  schema(): Promise<SchemaState>;
}

/** Every plain kind's collection. */
export type DocumentCollections = { readonly [K in DocumentKind]: RecordCollection<RecordOf<K>> };

/** The one place that owns loadout's state. */
export interface TeamStore extends DocumentCollections {
  /** The store as a person may see it (password masked). */
  readonly description: string;
  readonly oauth: OAuthCollection;
  /** What the replicas of a fleet share, in Postgres mode; absent in files mode. */
  readonly fleet?: StoreFleet;
  /** True while this replica listens for changes (false while it reconnects, or when opened without listening): for health checks. */
  readonly listening: boolean;
  /** Hear committed changes of any replica (this one included); returns how to stop. */
  onChange(listener: (change: StoreChange) => void): () => void;
  /**
   * Run `work` only if no replica runs work under the same `name` now (e.g. `discover:github`, so
   * discovery happens once per fleet); `{ ran: false }` when another holds it. The lock goes with
   * the connection, so a replica that dies mid-work releases it.
   */
  runExclusive<T>(name: string, work: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  /** Rows per kind. */
  counts(): Promise<Record<DocumentKind | 'oauth', number>>;
  close(): Promise<void>;
}

/** A store the replicas of a fleet share: the Postgres backend's. */
export type FleetStore = TeamStore & { readonly fleet: StoreFleet };
