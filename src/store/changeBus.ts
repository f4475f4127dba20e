// How replicas hear each other: one dedicated connection LISTENing on `loadout_changes`, where
// the store's triggers NOTIFY each committed write (table, key, op, revision). When the connection
// is lost it reconnects with backoff, listens again, and reads from the change log what was
// committed meanwhile; past the log's window it announces a resync instead. Receivers re-read.
import postgres, { type Sql } from 'postgres';
import { backoffDelayMs, silentLogger, type Logger } from '../shared/index.js';
import { KIND_OF_TABLE } from './records.js';
import { storeFault } from './storeFaults.js';
import type { StoreUrl } from './storeUrl.js';
import type { StoreChange } from './store.js';

/** Timings of the bus; defaults suit production, tests shorten them. */
export interface ChangeBusOptions {
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
  /** How often the listening connection is checked and the catch-up point moved on. */
  heartbeatMs?: number;
  logger?: Logger;
}

/** The channel every trigger notifies. */
export const CHANGE_CHANNEL = 'loadout_changes';
/** How long the change log keeps entries; a replica away longer re-reads everything. */
export const CHANGE_LOG_RETENTION_MS = 60 * 60_000;
// A transaction writes its log row before it commits: catch-up starts this far before the last
// point known to be heard, so a write that committed late is still read (duplicates are dropped).
const COMMIT_MARGIN_MS = 5_000;
const HEARD_REVISIONS_KEPT = 10_000;

/** The listening side of the store: one connection, reconnected until close(). */
export class ChangeBus {
  readonly #url: StoreUrl;
  readonly #options: Required<Omit<ChangeBusOptions, 'logger'>>;
  readonly #log: Logger;
  readonly #listeners = new Set<(change: StoreChange) => void>();
  readonly #heard = new Set<number>();
  readonly #sql: Sql;
  /** Database time up to which every committed change has been heard (minus the commit margin). */
  #heardUntil: Date | undefined;
  #reconnecting = false;
  /** Started with the store away: nothing heard before, so the first listen announces a resync. */
  #startedAway = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(url: StoreUrl, options: ChangeBusOptions = {}) {
    this.#url = url;
    this.#options = { reconnectBaseMs: 250, reconnectMaxMs: 10_000, heartbeatMs: 10_000, ...options };
    this.#log = (options.logger ?? silentLogger).child({ mod: 'store-bus' });
    // `onnotify` is postgres.js's own hook (sql.listen is built on it), missing from its typings.
    // sql.listen is not used because it drops a listener whose re-listen fails while the server is
    // still down; this bus retries with backoff instead.
    const connection: postgres.Options<Record<string, never>> & { onnotify: (channel: string, payload: string) => void } = {
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      connect_timeout: 10,
      fetch_types: false,
      onnotice: () => undefined,
      onnotify: (channel, payload) => {
        if (channel === CHANGE_CHANNEL) this.#receive(payload, false);
      },
      onclose: () => this.#lost(),
      connection: { application_name: 'loadout-listen' },
    };
    this.#sql = postgres(url.href, connection);
  }

  /** True while the connection listens (false while reconnecting). */
  get listening(): boolean {
    return this.#heardUntil !== undefined && !this.#reconnecting;
  }

  /** Listen for the first time; a fault here is one line naming the store. */
  async start(): Promise<void> {
    try {
      await this.#listen();
    } catch (error) {
      throw storeFault(this.#url, 'listen for changes', error);
    }
    this.#heartbeat = setInterval(() => void this.#beat(), this.#options.heartbeatMs).unref();
  }

  /**
   * Start while the store is away (a replica opened on its local copy): listen as soon as it is
   * back, then announce a resync, since what was committed before is unknown here.
   */
  startAway(): void {
    this.#startedAway = true;
    this.#heartbeat = setInterval(() => void this.#beat(), this.#options.heartbeatMs).unref();
    this.#reconnect();
  }

  /** Hear every change; returns how to stop. */
  onChange(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#heartbeat);
    await this.#sql.end({ timeout: 1 });
  }

  async #listen(): Promise<void> {
    await this.#sql.unsafe(`LISTEN ${CHANGE_CHANNEL}`);
    const [row] = await this.#sql<Array<{ now: Date }>>`SELECT clock_timestamp() AS now`;
    const missedSince = this.#heardUntil;
    this.#heardUntil = row!.now;
    if (missedSince) await this.#catchUp(missedSince);
    else if (this.#startedAway) {
      this.#startedAway = false;
      this.#emit({ type: 'resync', reason: 'the store was away when this replica started' });
    }
  }

  // The connection closed (server stopped, network cut): listen again after a backoff, until it works or close().
  #lost(): void {
    if (this.#closed || this.#reconnecting || this.#heardUntil === undefined) return;
    this.#log.warn({ store: this.#url.masked }, 'store connection lost; listening again when it is back');
    this.#reconnect();
  }

  // Listen again after a backoff, until it works or close().
  #reconnect(): void {
    this.#reconnecting = true;
    const attempt = (n: number): void => {
      this.#timer = setTimeout(
        () => {
          this.#listen().then(
            () => {
              this.#reconnecting = false;
              this.#log.info({ store: this.#url.masked, attempts: n + 1 }, 'listening to the store again');
            },
            (error: unknown) => {
              if (this.#closed) return;
              this.#log.debug({ err: storeFault(this.#url, 'listen', error).message }, 'store still unreachable');
              attempt(n + 1);
            },
          );
        },
        backoffDelayMs(n, this.#options.reconnectBaseMs, this.#options.reconnectMaxMs),
      );
      this.#timer.unref();
    };
    attempt(0);
  }

  // What was committed while not listening, from the log; a gap longer than the log keeps is a resync.
  async #catchUp(since: Date): Promise<void> {
    const from = new Date(since.getTime() - COMMIT_MARGIN_MS);
    await this
      .#sql`DELETE FROM store_changes WHERE changed_at < clock_timestamp() - ${CHANGE_LOG_RETENTION_MS / 1000} * interval '1 second'`;
    if (Date.now() - since.getTime() > CHANGE_LOG_RETENTION_MS - COMMIT_MARGIN_MS) {
      this.#emit({ type: 'resync', reason: `not listening since ${since.toISOString()}, longer than the change log keeps` });
      return;
    }
    const rows = await this.#sql<Array<{ revision: string; kind: string; key: string; op: string }>>`
      SELECT revision, kind, key, op FROM store_changes WHERE changed_at >= ${from} ORDER BY revision`;
    for (const row of rows) this.#deliver(row.kind, row.key, row.op, Number(row.revision), true);
  }

  // Checks the connection (a silent network loss closes it here) and moves the catch-up point on.
  async #beat(): Promise<void> {
    if (this.#reconnecting || this.#closed) return;
    try {
      const [row] = await this.#sql<Array<{ now: Date }>>`SELECT clock_timestamp() AS now`;
      this.#heardUntil = row!.now;
    } catch {
      this.#lost();
    }
  }

  #receive(payload: string, missed: boolean): void {
    try {
      const { table, key, op, revision } = JSON.parse(payload) as { table: string; key: string; op: string; revision: number };
      this.#deliver(table, key, op, revision, missed);
    } catch (error) {
      this.#log.warn({ payload, err: String(error) }, 'ignored a change notice that is not loadout JSON');
    }
  }

  #deliver(table: string, key: string, op: string, revision: number, missed: boolean): void {
    const kind = KIND_OF_TABLE.get(table);
    if (!kind || (op !== 'put' && op !== 'delete') || this.#heard.has(revision)) return;
    this.#heard.add(revision);
    if (this.#heard.size > HEARD_REVISIONS_KEPT) this.#heard.delete(this.#heard.values().next().value!);
    this.#emit({ type: 'change', kind, key, op, revision, missed });
  }

  #emit(change: StoreChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        this.#log.error({ err: String(error) }, 'a store change listener threw');
      }
    }
  }
}
