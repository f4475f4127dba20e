// The Postgres backend of the store: one pool for reads and writes, one listening connection
// (ChangeBus). Each write is one statement (its trigger logs and notifies in the same
// transaction), so a write is either committed and heard, or failed and reported: never half done.
import postgres, { type Sql } from 'postgres';
import type * as z from 'zod';
import { LoadoutError, silentLogger, type Logger } from '../shared/index.js';
import { PostgresAuditTable } from './auditTable.js';
import { PostgresLimitBuckets } from './limitBuckets.js';
import { PostgresReplicaTable } from './replicaTable.js';
import { ChangeBus, type ChangeBusOptions } from './changeBus.js';
import type { ConnectionLossGuard } from './connectionLossGuard.js';
import { migrate, readMigrations, refuseNewer, schemaState, type Migration, type SchemaState } from './migrations.js';
import { DocumentTable, OAuthTable, type Run } from './recordTables.js';
import { TELEMETRY_OFF, type Telemetry } from '../telemetry/index.js';
import { DOCUMENT_KINDS, OAUTH_KIND, type DocumentKind, type RecordOf } from './records.js';
import { SecretBox } from './secretBox.js';
import type { DocumentCollections, FleetStore, OAuthCollection, RecordCollection, StoreFleet, TeamStore } from './store.js';
import { isStoreAway, storeFault } from './storeFaults.js';
import { CopiedCollection } from './copiedCollection.js';
import { LocalCopy, copyDirOf, type CopiedKind } from './localCopy.js';
import { parseStoreUrl, type StoreUrl } from './storeUrl.js';

/** How to open a Postgres store. */
export interface PostgresStoreOptions {
  /** postgres://USER:PASSWORD@HOST:PORT/DATABASE */
  url: string;
  /** Apply pending migrations at open (the default); without, a schema that is behind is refused. */
  migrate?: boolean;
  /** LOADOUT_SECRET_KEY; without it OAuth records can be neither read nor written. */
  secretKey?: string;
  /** Connections in the pool (the listener is one more). */
  poolSize?: number;
  /** Hear changes (the default); `store status` and one-shot commands need not. */
  listen?: boolean;
  bus?: ChangeBusOptions;
  logger?: Logger;
  /**
   * A data dir to keep the local copy of the records a replica serves in (localCopy.ts); with it,
   * a replica whose copy holds records opens while the store is away, and reads the copy until it is back.
   */
  localCopy?: string;
  /**
   * The process's guard that keeps a lost connection's stray rejection from ending it: the store is
   * watched while open. The command that opens the store installs it (cli/rejectionGuard.ts).
   */
  connectionLoss?: ConnectionLossGuard;
  /** Where each statement is measured (db.client.operation.duration); default: off. */
  telemetry?: Telemetry;
}

// postgres.js waits before each new connection after failed ones, 3^n/100 s up to 20 s (its
// default backoff): an outage of a few seconds held every statement, and the first ones after the
// store was back, that long. A replica answers from its local copy while the store is away, so it
// tries again within a quarter of a second instead.
// How long a close waits for statements under way before it ends their connections. What must not
// be lost is kept before (audit records are in the spool, sent again at the next start); a
// statement waiting for a store that is away would otherwise hold the close past `serve`'s cap (5 s
// over HTTP), and the replica exited 1 after a SIGTERM during an outage (the fault suite).
const CLOSE_WAIT_S = 1;

const CONNECTION_OPTIONS = {
  connect_timeout: 10,
  backoff: (retries: number) => Math.min(0.01 * 2 ** retries, 0.25),
  onnotice: () => undefined,
  connection: { application_name: 'loadout' },
} as const;

/** Connect, check or migrate the schema, and start listening; every fault is one line naming the store. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<FleetStore> {
  const url = parseStoreUrl(options.url);
  const logger = options.logger ?? silentLogger;
  const box = options.secretKey === undefined ? undefined : new SecretBox(options.secretKey);
  const migrations = await readMigrations();
  const sql = postgres(url.href, { ...CONNECTION_OPTIONS, max: options.poolSize ?? 10 });
  const copy = options.localCopy === undefined ? undefined : new LocalCopy(copyDirOf(options.localCopy, url.href), logger);
  const migrating = options.migrate ?? true;
  // Its faults come as they are: each caller says what it was doing.
  const checkSchema = async (): Promise<void> => {
    if (migrating) {
      await migrate(sql, url, migrations);
    } else {
      const state = await schemaState(sql, migrations);
      refuseNewer(url, state.version, state.knownVersion);
    }
  };
  let bus: ChangeBus | undefined;
  let away = false;
  try {
    try {
      await sql`SELECT 1`;
    } catch (error) {
      // A replica that has served from this store before starts on its local copy while the store is away.
      const fault = storeFault(url, 'connect', error);
      if (!copy || !isStoreAway(fault) || !(await copy.holdsAny())) throw fault;
      logger.warn({ store: url.masked, err: fault.message }, 'store away at start; serving from the local copy');
      away = true;
    }
    if (!away)
      await checkSchema().catch((error: unknown) =>
        Promise.reject(storeFault(url, migrating ? 'migrate the schema' : 'check the schema', error)),
      );
    if (options.listen ?? true) {
      bus = new ChangeBus(url, { logger, ...options.bus });
      if (away) bus.startAway();
      else await bus.start();
    }
  } catch (error) {
    await Promise.allSettled([sql.end({ timeout: 1 }), bus?.close()]);
    throw error;
  }
  return new PostgresStore({
    url,
    sql,
    migrations,
    bus,
    box,
    unguard: options.connectionLoss?.watch(url, logger) ?? (() => undefined),
    copy,
    logger,
    telemetry: options.telemetry ?? TELEMETRY_OFF,
    // Opened away: the schema is checked (or migrated) before the first statement once the store is back.
    checkSchema: away ? checkSchema : undefined,
  });
}

/** What a PostgresStore is made of, once opened. */
interface PostgresStoreParts {
  url: StoreUrl;
  sql: Sql;
  migrations: readonly Migration[];
  bus: ChangeBus | undefined;
  box: SecretBox | undefined;
  /** Stops treating a lost connection's stray rejection as harmless (see connectionLossGuard.ts). */
  unguard: () => void;
  copy: LocalCopy | undefined;
  logger: Logger;
  telemetry: Telemetry;
  /** The schema check still to run (the store was away at open). */
  checkSchema: (() => Promise<void>) | undefined;
}

class PostgresStore implements FleetStore {
  readonly description: string;
  readonly catalog: DocumentCollections['catalog'];
  readonly discovery: DocumentCollections['discovery'];
  readonly toolsets: DocumentCollections['toolsets'];
  readonly equipped: DocumentCollections['equipped'];
  readonly sessions: DocumentCollections['sessions'];
  readonly learnedWords: DocumentCollections['learnedWords'];
  readonly optimization: DocumentCollections['optimization'];
  readonly clients: DocumentCollections['clients'];
  readonly oauth: OAuthCollection;
  readonly fleet: StoreFleet;
  readonly #url: StoreUrl;
  readonly #sql: Sql;
  readonly #migrations: readonly Migration[];
  readonly #bus: ChangeBus | undefined;
  /** The connection exclusive work holds its lock on, opened on first use. */
  #locks: Sql | undefined;
  /** Names whose work runs in this process now. */
  readonly #held = new Set<string>();
  #closing: Promise<void> | undefined;
  readonly #unguard: () => void;

  /** The schema check still to run before any statement, until it succeeds once (the store was away at open). */
  #checkSchema: (() => Promise<void>) | undefined;
  #checkingSchema: Promise<void> | undefined;

  constructor({ url, sql, migrations, bus, box, unguard, copy, logger, telemetry, checkSchema }: PostgresStoreParts) {
    this.#unguard = unguard;
    this.#url = url;
    this.#sql = sql;
    this.#migrations = migrations;
    this.#bus = bus;
    this.#checkSchema = checkSchema;
    this.description = url.masked;
    // Each table's statements, timed for telemetry (db.client.operation.duration).
    const runOn =
      (table: string): Run =>
      async (operation, doing, work) => {
        if (this.#closing) throw new LoadoutError('CLOSED', `store ${url.masked} is closed`);
        const startedMs = performance.now();
        let errorType: string | undefined;
        try {
          if (this.#checkSchema) await this.#schemaChecked();
          return await work(sql);
        } catch (error) {
          const fault = storeFault(url, doing, error);
          errorType = fault.code;
          throw fault;
        } finally {
          telemetry.storeOperation({ table, operation, durationS: (performance.now() - startedMs) / 1000, errorType });
        }
      };
    // TypeScript cannot narrow DOCUMENT_KINDS[kind] by a generic key: the cast names the schema's type once.
    const collection = <K extends DocumentKind>(kind: K): RecordCollection<RecordOf<K>> =>
      new DocumentTable(
        kind,
        DOCUMENT_KINDS[kind],
        DOCUMENT_KINDS[kind].schema as unknown as z.ZodType<RecordOf<K>>,
        runOn(DOCUMENT_KINDS[kind].table),
      );
    // The kinds a replica serves its principals from are kept in its local copy as they are used.
    const copied = <K extends CopiedKind>(kind: K): RecordCollection<RecordOf<K>> =>
      copy ? new CopiedCollection(kind, collection(kind), copy, logger.child({ mod: 'store-copy' })) : collection(kind);
    this.catalog = copied('catalog');
    this.discovery = collection('discovery');
    this.toolsets = copied('toolsets');
    this.equipped = copied('equipped');
    this.sessions = collection('sessions');
    this.learnedWords = collection('learnedWords');
    this.optimization = copied('optimization');
    this.clients = collection('clients');
    this.oauth = new OAuthTable(runOn(OAUTH_KIND.table), box);
    this.fleet = {
      audit: new PostgresAuditTable(runOn('audit_records')),
      limits: new PostgresLimitBuckets(runOn('limit_buckets')),
      replicas: new PostgresReplicaTable(runOn('replica_heartbeats')),
      schema: () => this.#schema(),
    };
  }

  // One check at a time; a failed one (the store still away) is tried again by the next statement.
  #schemaChecked(): Promise<void> {
    this.#checkingSchema ??= this.#checkSchema!().then(
      () => {
        this.#checkSchema = undefined;
      },
      (error: unknown) => {
        this.#checkingSchema = undefined;
        throw error;
      },
    );
    return this.#checkingSchema;
  }

  get listening(): boolean {
    return this.#bus?.listening ?? false;
  }

  onChange(listener: Parameters<TeamStore['onChange']>[0]): () => void {
    if (!this.#bus) throw new LoadoutError('CLOSED', `store ${this.#url.masked} was opened without listening for changes`);
    return this.#bus.onChange(listener);
  }

  async runExclusive<T>(name: string, work: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    const lockKey = `loadout:${name}`;
    // Session locks on the one connection of a pool of its own, not a reserved connection: postgres.js
    // (3.4.9, porsager/postgres#1208) writes to a reserved connection's socket after it is gone, an
    // exception nothing can catch; a pool drops a lost connection and connects anew instead.
    this.#locks ??= postgres(this.#url.href, { ...CONNECTION_OPTIONS, max: 1, idle_timeout: 0, max_lifetime: null });
    const locks = this.#locks;
    // Session locks are re-entrant on their connection: work under a name running here already is told apart here.
    if (this.#held.has(name)) return { ran: false };
    this.#held.add(name);
    try {
      return await this.#runLocked(locks, name, lockKey, work);
    } finally {
      this.#held.delete(name);
    }
  }

  async #runLocked<T>(
    locks: Sql,
    name: string,
    lockKey: string,
    work: () => Promise<T>,
  ): Promise<{ ran: true; value: T } | { ran: false }> {
    let locked: boolean;
    try {
      const [row] = await locks<Array<{ locked: boolean }>>`SELECT pg_try_advisory_lock(hashtextextended(${lockKey}, 0)) AS locked`;
      locked = row!.locked;
    } catch (error) {
      throw storeFault(this.#url, `take the lock '${name}'`, error);
    }
    if (!locked) return { ran: false };
    try {
      return { ran: true, value: await work() };
    } finally {
      // A lost connection has released the lock already: nothing to undo then.
      await locks`SELECT pg_advisory_unlock(hashtextextended(${lockKey}, 0))`.catch(() => undefined);
    }
  }

  async #schema(): Promise<SchemaState> {
    try {
      return await schemaState(this.#sql, this.#migrations);
    } catch (error) {
      throw storeFault(this.#url, 'read the schema state', error);
    }
  }

  async counts(): Promise<Record<DocumentKind | 'oauth', number>> {
    const tables: Array<[DocumentKind | 'oauth', string]> = [
      ...Object.entries(DOCUMENT_KINDS).map(([kind, { table }]) => [kind as DocumentKind, table] as [DocumentKind, string]),
      ['oauth', OAUTH_KIND.table],
    ];
    const counts = {} as Record<DocumentKind | 'oauth', number>;
    try {
      for (const [kind, table] of tables) {
        const [row] = await this.#sql<Array<{ count: string }>>`SELECT count(*) AS count FROM ${this.#sql(table)}`;
        counts[kind] = Number(row!.count);
      }
    } catch (error) {
      throw storeFault(this.#url, 'count records', error);
    }
    return counts;
  }

  close(): Promise<void> {
    this.#closing ??= Promise.allSettled([
      this.#bus?.close(),
      this.#sql.end({ timeout: CLOSE_WAIT_S }),
      this.#locks?.end({ timeout: CLOSE_WAIT_S }),
    ]).then(() => this.#unguard());
    return this.#closing;
  }
}
