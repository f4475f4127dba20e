// Health of the downstream servers: pings connected servers on an interval, keeps always-on
// servers connected (reconnecting with capped, jittered exponential backoff) and tracks which
// servers are unavailable. It decides nothing about visible tools; listeners hear of changes.
import type { ServerConfig } from '../config/index.js';
import { BackoffTimers, errorMessage, type Logger } from '../shared/index.js';
import type { PoolEvent, ServerPool } from './pool.js';

/** The part of the pool health works with (a port, so tests can stand in for it). */
export type HealthPool = Pick<ServerPool, 'onEvent' | 'config' | 'configs' | 'isConnected' | 'status' | 'connection' | 'discard'>;

/** Options of a ServerHealth. */
interface HealthOptions {
  pool: HealthPool;
  logger: Logger;
  /** How often connected servers are pinged; 0 turns pings off (crashes are still noticed). */
  pingIntervalMs: number;
  /** First reconnect delay of an always-on server; doubles per failed attempt. */
  reconnectBaseMs: number;
  /** Longest reconnect delay. */
  reconnectMaxMs: number;
  /** Source of jitter in [0, 1); injectable for tests. */
  random?: () => number;
}

/** Called when a server becomes unavailable or available again. */
type AvailabilityListener = (server: string, available: boolean) => void;

/**
 * Availability means "loadout keeps this server connected and it is not": only always-on
 * servers are ever unavailable. A lazy server that crashed or stopped answering is simply
 * disconnected; its next call starts it again, so its tools stay listed.
 */
export class ServerHealth {
  readonly #options: HealthOptions;
  readonly #unavailable = new Set<string>();
  readonly #reconnects: BackoffTimers;
  readonly #pinging = new Set<string>();
  readonly #listeners = new Set<AvailabilityListener>();
  #pingTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed: Promise<void> | undefined;

  constructor(options: HealthOptions) {
    this.#options = options;
    this.#reconnects = new BackoffTimers(options.reconnectBaseMs, options.reconnectMaxMs, options.random);
  }

  /** Whether a server's tools may be listed now (false only for an always-on server that is down). */
  isAvailable(server: string): boolean {
    return !this.#unavailable.has(server);
  }

  /** Subscribe to availability changes; returns the unsubscribe function. */
  onChange(listener: AvailabilityListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Begin pinging and connect the always-on servers in the background (returns at once). */
  start(): void {
    if (this.#unsubscribe || this.#closed) return;
    const { pool, pingIntervalMs } = this.#options;
    this.#unsubscribe = pool.onEvent((event) => this.#onPoolEvent(event));
    if (pingIntervalMs > 0) {
      this.#pingTimer = setInterval(() => this.#pingAll(), pingIntervalMs);
      this.#pingTimer.unref();
    }
    this.#connectAlwaysOn();
  }

  /** Stop pinging and reconnecting (connections themselves belong to the pool). Runs once. */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#unsubscribe?.();
      if (this.#pingTimer) clearInterval(this.#pingTimer);
      this.#reconnects.clearAll();
      this.#closed = Promise.resolve();
    }
    return this.#closed;
  }

  #onPoolEvent(event: PoolEvent): void {
    if (event.type === 'configured') {
      this.#reconcile();
      return;
    }
    if (!this.#keptConnected(event.server)) return;
    if (event.type === 'connected') {
      this.#reconnects.reset(event.server);
      this.#setAvailable(event.server, true);
    } else if (event.type === 'lost') {
      this.#setAvailable(event.server, false);
      this.#scheduleReconnect(event.server);
    } else if (event.type === 'stopped') {
      // Stopped on purpose while still always-on (its config changed): start it with the new one.
      this.#connect(event.server);
    }
  }

  // Each start is its own macrotask, so spawning many always-on servers never holds up the
  // client's first requests.
  #connectAlwaysOn(): void {
    for (const server of Object.keys(this.#options.pool.configs)) {
      if (this.#keptConnected(server) && !this.#options.pool.isConnected(server)) setImmediate(() => this.#connect(server));
    }
  }

  #connect(server: string): void {
    if (this.#closed || !this.#keptConnected(server)) return;
    this.#reconnects.cancel(server);
    // connection() throws synchronously for an unknown server or a closed pool; keep it a rejection.
    Promise.resolve()
      .then(() => this.#options.pool.connection(server))
      .then(
        () => {
          if (this.#closed) return;
          this.#reconnects.reset(server);
          this.#setAvailable(server, true);
        },
        (error: unknown) => {
          if (this.#closed || !this.#keptConnected(server)) return;
          this.#setAvailable(server, false);
          this.#scheduleReconnect(server, errorMessage(error));
        },
      );
  }

  #scheduleReconnect(server: string, reason?: string): void {
    if (this.#closed || this.#reconnects.has(server)) return;
    const { attempt, delayMs } = this.#reconnects.schedule(server, () => this.#connect(server));
    this.#options.logger.warn({ mod: 'health', server, attempt, delayMs, err: reason }, 'always-on server down; reconnecting');
  }

  // After a servers.yaml change: forget servers no longer kept connected, connect new always-on ones.
  #reconcile(): void {
    for (const server of new Set([...this.#unavailable, ...this.#reconnects.keys()])) {
      if (this.#keptConnected(server)) continue;
      this.#reconnects.reset(server);
      this.#setAvailable(server, true);
    }
    for (const server of Object.keys(this.#options.pool.configs)) {
      const idle = !this.#options.pool.isConnected(server) && this.#options.pool.status(server).state === 'stopped';
      if (this.#keptConnected(server) && idle && !this.#reconnects.has(server)) this.#connect(server);
    }
  }

  #pingAll(): void {
    const { pool } = this.#options;
    for (const server of Object.keys(pool.configs)) {
      if (this.#pinging.has(server) || !pool.isConnected(server)) continue;
      this.#pinging.add(server);
      void this.#ping(server, pool.config(server)).finally(() => this.#pinging.delete(server));
    }
  }

  async #ping(server: string, config: ServerConfig | undefined): Promise<void> {
    const { pool, logger } = this.#options;
    if (!config || !pool.isConnected(server)) return;
    const connection = await pool.connection(server);
    const timeoutMs = config.timeout_seconds * 1000;
    try {
      await connection.ping(timeoutMs);
    } catch (error) {
      if (this.#closed) return;
      logger.warn({ mod: 'health', server, err: errorMessage(error) }, 'server did not answer a ping');
      // A hung server is ended like a crashed one: always-on ones reconnect, lazy ones restart on their next call.
      await pool.discard(server, `did not answer a ping within ${config.timeout_seconds} s`, connection);
    }
  }

  #keptConnected(server: string): boolean {
    const config = this.#options.pool.config(server);
    return config !== undefined && config.enabled && config.always_on;
  }

  #setAvailable(server: string, available: boolean): void {
    if (available !== this.#unavailable.has(server)) return;
    if (available) this.#unavailable.delete(server);
    else this.#unavailable.add(server);
    this.#options.logger.info({ mod: 'health', server, available }, available ? 'server available' : 'server unavailable');
    for (const listener of this.#listeners) {
      try {
        listener(server, available);
      } catch (error) {
        this.#options.logger.error({ mod: 'health', err: errorMessage(error) }, 'availability listener failed');
      }
    }
  }
}
