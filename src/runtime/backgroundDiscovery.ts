// Discovery of the servers the cached catalog lacks, kept off the agent's path. A warm start waits
// for nothing; a start with servers never tried before waits a few seconds at most for them; a
// server that failed is tried again in the background with backoff, remembered across starts
// (discoveryRecords.ts). states() says what each undiscovered server is waiting for. In store mode
// a server is discovered once per fleet: the replica that takes its lock discovers it, the others
// wait for the result to reach their catalog (the store's change notice reloads it) or the stored
// record, whose retry time is then the whole fleet's. A server that failed for want of a login is
// tried at once when asked (retryAuthorized) once its tokens are usable, and a connection made
// with them forgets that failure: every reader of the records then agrees with the tokens.
import pLimit, { type LimitFunction } from 'p-limit';
import type { CatalogStore } from '../catalog/index.js';
import { holdsUsableTokens, type OAuthRecords, type ServerPool } from '../downstream/index.js';
import { KeyedTimers, WorkInFlight, errorMessage, settleWithin, type Logger } from '../shared/index.js';
import type { TeamStore } from '../store/index.js';
import {
  failedRecord,
  readDiscoveryRecord,
  readDiscoveryRecords,
  recordAuthorized,
  recordDiscoveryOutcomes,
  type DiscoveryRecord,
  type DiscoveryRecordsPlace,
} from './discoveryRecords.js';

// How long the first catalog read waits for servers never tried before. A server that answers
// (most do in well under a second) joins at once; a slow or hanging one is reported as pending
// rather than holding the agent's first call for its whole discovery timeout.
const FIRST_CONTACT_WAIT_MS = 5000;

/** Why an undiscovered server has no tools in the catalog yet. */
export type DiscoveryState =
  /** An attempt is running or queued; `previous` is the last failure, if it failed before. */
  | { server: string; state: 'pending'; since: number; previous?: DiscoveryRecord }
  /** The last attempt failed; the next one is due at `record.retryAt`. */
  | { server: string; state: 'failed'; record: DiscoveryRecord };

/** What background discovery works with. */
interface BackgroundDiscoveryOptions {
  catalog: CatalogStore;
  pool: ServerPool;
  logger: Logger;
  /** Where failed discoveries are recorded (discoveryRecordsOf). */
  records: DiscoveryRecordsPlace;
  /** Where OAuth records of HTTP servers live: a server that failed for want of a login is tried again once its tokens are usable. */
  oauthRecords?: OAuthRecords;
  /** How many servers are discovered at once. */
  concurrency: number;
  /** In store mode, the fleet's lock per server and how its replicas hear each other's discoveries. */
  fleet?: FleetDiscovery;
}

/** What a replica of a fleet discovers with: one replica tries a server, the others wait for its result. */
export interface FleetDiscovery {
  runExclusive: TeamStore['runExclusive'];
  /** How long to wait for another replica's discovery before asking for the lock again. */
  waitMs: number;
  /** Hear that a server's failed discovery was recorded (by another replica, say); returns how to stop. */
  onRecordChange: (listener: (server: string) => void) => () => void;
}

/** Discovers uncached servers in the background, with backoff. */
export class BackgroundDiscovery {
  readonly #options: BackgroundDiscoveryOptions;
  readonly #limit: LimitFunction;
  readonly #pending = new Map<string, { since: number; done: Promise<void> }>();
  readonly #failed = new Map<string, DiscoveryRecord>();
  readonly #retries = new KeyedTimers();
  /** Attempts and record writes: close() waits for them, so nothing is written after it. */
  readonly #work = new WorkInFlight();
  readonly #unsubscribe: Array<() => void>;
  /** Waits for another replica's discovery, ended at close(). */
  readonly #waits = new Set<() => void>();
  #ready: Promise<void> | undefined;
  #closed = false;

  constructor(options: BackgroundDiscoveryOptions) {
    this.#options = options;
    this.#limit = pLimit(options.concurrency);
    this.#unsubscribe = [
      // A server discovered another way (an always-on one that came up, `loadout refresh`) is no longer failing.
      options.catalog.onChange(() => this.#forgetDiscovered()),
      // A connection made with a server's tokens proves them usable: a failure for want of a login no longer stands.
      options.pool.onEvent((event) => {
        if (event.type === 'connected') this.#forgetAuthorizationFailure(event.server, Date.now());
      }),
    ];
  }

  /**
   * Load the cached catalog and start discovering the servers it lacks. Settles once the servers
   * never tried before have answered or failed, or after 5 s, whichever is first; servers that
   * failed before are retried in the background when their wait is over. Never rejects.
   */
  ready(): Promise<void> {
    this.#ready ??= this.#firstRound().catch((error: unknown) =>
      this.#options.logger.error({ mod: 'catalog', err: errorMessage(error) }, 'discovery failed'),
    );
    return this.#ready;
  }

  /** Start discovering servers that became uncached (servers.yaml gained one, or an entry changed). */
  discoverUncached(): void {
    if (!this.#ready) return;
    const { catalog, pool } = this.#options;
    void readDiscoveryRecords(this.#options.records, pool.configs)
      .catch(() => new Map<string, DiscoveryRecord>())
      .then((records) => {
        if (this.#closed) return;
        for (const server of catalog.undiscoveredServers) {
          if (this.#pending.has(server)) continue;
          const record = records.get(server);
          if (record) this.#retryLater(server, record);
          else {
            this.#failed.delete(server);
            void this.#discover(server);
          }
        }
      });
  }

  /**
   * Discover now the undiscovered servers whose last failure was for want of a login and whose
   * tokens are usable now (a login since, here or elsewhere; a key set right): that failure no
   * longer stands, whatever retry it set. Settles once they have been tried.
   */
  async retryAuthorized(): Promise<void> {
    const { oauthRecords, catalog } = this.#options;
    if (oauthRecords === undefined || this.#closed) return;
    // This process's own discoveries' failures, and the recorded ones it waits out (a failure before it started).
    const failures = new Map(catalog.discoveryFailures());
    for (const [server, record] of this.#failed) failures.set(server, record.failure);
    const undiscovered = new Set(catalog.undiscoveredServers);
    const waiting = [...failures]
      .filter(([server, failure]) => failure.code === 'NEEDS_AUTHORIZATION' && undiscovered.has(server))
      .map(([server]) => server);
    if (!waiting.length) return;
    // The OAuth record loses its mark when a login stores tokens; until then a retry would only be refused again.
    const records = await Promise.all(waiting.map((server) => oauthRecords.read(server).catch(() => undefined)));
    const usable = waiting.filter((_server, index) => holdsUsableTokens(records[index]));
    await Promise.all(usable.map((server) => this.#discover(server, { authorized: true })));
  }

  /** The undiscovered enabled servers with an attempt running or a failure behind them. */
  states(): DiscoveryState[] {
    const states: DiscoveryState[] = [];
    for (const server of this.#options.catalog.undiscoveredServers) {
      const pending = this.#pending.get(server);
      const record = this.#failed.get(server);
      if (pending) states.push({ server, state: 'pending', since: pending.since, ...(record ? { previous: record } : {}) });
      else if (record) states.push({ server, state: 'failed', record });
    }
    return states;
  }

  /** The state of one server (see states()). */
  state(server: string): DiscoveryState | undefined {
    return this.states().find((state) => state.server === server);
  }

  /**
   * Stop retrying, and settle once the attempts in flight (they end with the pool, which the owner
   * closes meanwhile) and their records are written. A server still unanswered after the first
   * read's whole wait is recorded as failed, so the next start does not wait for it again (it is
   * tried in the background instead). One cut short sooner says nothing about the server: a
   * client's era probe runs loadout for a moment and ends it, and recording that as a failure kept
   * the real process from discovering the server for 30 s.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.#retries.clearAll();
    for (const done of this.#waits) done();
    const now = Date.now();
    const unanswered = [...this.#pending]
      .filter(([, { since }]) => now - since >= FIRST_CONTACT_WAIT_MS)
      .map(([server, { since }]) => ({
        server,
        ok: false as const,
        failure: {
          code: 'SERVER_START_FAILED' as const,
          text: `Server '${server}' had not answered its discovery ${Math.round((now - since) / 1000)} s after it began, when loadout stopped`,
        },
      }));
    if (unanswered.length) {
      const { records, pool, logger } = this.#options;
      await recordDiscoveryOutcomes(records, pool.configs, unanswered).catch((error: unknown) =>
        logger.debug({ mod: 'catalog', err: errorMessage(error) }, 'could not record the unanswered discoveries'),
      );
    }
    await this.#work.settled();
  }

  async #firstRound(): Promise<void> {
    const { catalog, pool, records: place } = this.#options;
    await catalog.ensureLoaded();
    const servers = catalog.undiscoveredServers;
    if (!servers.length) return;
    const records = await readDiscoveryRecords(place, pool.configs);
    const firstContacts: Array<Promise<void>> = [];
    for (const server of servers) {
      const record = records.get(server);
      if (record) this.#retryLater(server, record);
      else firstContacts.push(this.#discover(server));
    }
    this.#options.logger.info(
      { mod: 'catalog', servers: servers.filter((server) => !records.has(server)), later: [...records.keys()] },
      'discovering servers without cached tools',
    );
    await settleWithin(Promise.all(firstContacts), FIRST_CONTACT_WAIT_MS);
  }

  #retryLater(server: string, record: DiscoveryRecord): void {
    this.#failed.set(server, record);
    this.#retries.set(server, Math.max(0, Date.parse(record.retryAt) - Date.now()), () => void this.#discover(server));
  }

  // One attempt per server at a time; resolves when it is over, whatever its outcome. An attempt
  // `authorized` (its tokens are usable since its failure) does not wait for the fleet's retry.
  #discover(server: string, options: { authorized?: boolean } = {}): Promise<void> {
    const running = this.#pending.get(server);
    if (running) return running.done;
    if (this.#closed) return Promise.resolve();
    this.#retries.clear(server);
    const done = this.#work
      .track(this.#limit(() => this.#attempt(server, options.authorized ?? false)))
      .catch((error: unknown) => this.#options.logger.error({ mod: 'catalog', server, err: errorMessage(error) }, 'discovery failed'))
      .finally(() => this.#pending.delete(server));
    this.#pending.set(server, { since: Date.now(), done });
    return done;
  }

  async #attempt(server: string, authorized: boolean): Promise<void> {
    const { catalog, fleet } = this.#options;
    if (this.#closed || !catalog.undiscoveredServers.includes(server)) return;
    const records = fleet ? await this.#attemptInFleet(server, fleet, authorized) : await this.#tryAndRecord(server);
    if (!records || this.#closed) return;
    const record = records.get(server);
    if (!record) this.#failed.delete(server);
    else this.#retryLater(server, record);
  }

  // Discover one server and record the outcome: its tools join the catalog as soon as it answers,
  // not when the slowest one has. Returns the records of the servers that failed (undefined when
  // closed meanwhile).
  async #tryAndRecord(server: string): Promise<Map<string, DiscoveryRecord> | undefined> {
    const { catalog, pool, records: place, logger } = this.#options;
    const [result] = await catalog.discover([server]);
    if (!result || this.#closed) return undefined;
    try {
      return await recordDiscoveryOutcomes(place, pool.configs, [result]);
    } catch (error) {
      logger.warn({ mod: 'catalog', server, err: errorMessage(error) }, 'could not record the discovery outcome');
      const config = pool.config(server);
      return new Map(!result.ok && config ? [[server, failedRecord(this.#failed.get(server), result.failure, config, Date.now())]] : []);
    }
  }

  // In a fleet, one replica at a time tries a server, and the retry schedule is the fleet's: under
  // the lock, the stored record is read first, and a retry another replica has set since is waited
  // for rather than tried again (so a failing server is started once per wait, and counts one
  // failure, however many replicas there are). The outcome is recorded before the lock goes.
  // Undefined when another replica discovered the server (it is in the catalog now). An attempt
  // `authorized` tries at once under the lock: the retry set was for want of the tokens usable now.
  async #attemptInFleet(server: string, fleet: FleetDiscovery, authorized: boolean): Promise<Map<string, DiscoveryRecord> | undefined> {
    const { catalog } = this.#options;
    for (;;) {
      const outcome = await fleet.runExclusive(
        `discover:${server}`,
        async () => (authorized ? undefined : await this.#retrySetElsewhere(server)) ?? this.#tryAndRecord(server),
      );
      if (outcome.ran) return outcome.value;
      // Another replica holds the lock: its result reaches this catalog or the stored record, or
      // (it died) the lock is free again once the wait is over.
      await this.#discoveredElsewhere(server, fleet);
      if (this.#closed || !catalog.undiscoveredServers.includes(server)) return undefined;
      // Its failure is heard before it lets go of the lock: the record it left is read at once.
      const waiting = await this.#retrySetElsewhere(server);
      if (waiting) return waiting;
    }
  }

  // The stored record of `server` (as the records of the servers that failed) when the fleet's next
  // try of it is still ahead, else undefined. An unreadable record is no reason not to try: the
  // attempt's own record then says how it went.
  async #retrySetElsewhere(server: string): Promise<Map<string, DiscoveryRecord> | undefined> {
    const { pool, records: place, logger } = this.#options;
    const record = await readDiscoveryRecord(place, server, pool.configs).catch(() => undefined);
    if (!record || Date.parse(record.retryAt) <= Date.now()) return undefined;
    logger.info({ mod: 'catalog', server, retryAt: record.retryAt }, 'discovery waits for the retry the fleet set');
    return new Map([[server, record]]);
  }

  // Settles once `server` is in the catalog or a failure of it was recorded, after the fleet's wait,
  // or at close(), whichever is first.
  #discoveredElsewhere(server: string, fleet: FleetDiscovery): Promise<void> {
    const { catalog } = this.#options;
    const discovered = () => !catalog.undiscoveredServers.includes(server);
    return new Promise((resolve) => {
      const done = (): void => {
        stopHearing();
        stopHearingRecords();
        clearTimeout(timer);
        this.#waits.delete(done);
        resolve();
      };
      const stopHearing = catalog.onChange(() => {
        if (discovered()) done();
      });
      const stopHearingRecords = fleet.onRecordChange((changed) => {
        if (changed === server) done();
      });
      const timer = setTimeout(done, fleet.waitMs);
      this.#waits.add(done);
      if (discovered() || this.#closed) done();
    });
  }

  #forgetAuthorizationFailure(server: string, connectedAt: number): void {
    if (this.#closed) return;
    const { records, logger } = this.#options;
    this.#work
      .track(recordAuthorized(records, server, connectedAt))
      .catch((error: unknown) => logger.debug({ mod: 'catalog', server, err: errorMessage(error) }, 'could not update discovery records'));
  }

  #forgetDiscovered(): void {
    if (!this.#failed.size) return;
    const undiscovered = new Set(this.#options.catalog.undiscoveredServers);
    const found = [...this.#failed.keys()].filter((server) => !undiscovered.has(server));
    if (!found.length) return;
    for (const server of found) {
      this.#failed.delete(server);
      this.#retries.clear(server);
    }
    const { records, pool, logger } = this.#options;
    this.#work
      .track(
        recordDiscoveryOutcomes(
          records,
          pool.configs,
          found.map((server) => ({ server, ok: true })),
        ),
      )
      .catch((error: unknown) => logger.debug({ mod: 'catalog', err: errorMessage(error) }, 'could not update discovery records'));
  }
}
