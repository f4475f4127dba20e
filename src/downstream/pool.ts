// The set of downstream servers and their connections: lazy start on first use (concurrent
// first uses share one start), idle stop, and events when a connection comes or goes. It
// never decides what tools are visible; it answers with connections and events.
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { isDeepStrictEqual } from 'node:util';
import type { ServerConfig } from '../config/index.js';
import { KeyedTimers, LoadoutError, errorMessage, isLoadoutError } from '../shared/index.js';
import { TELEMETRY_OFF } from '../telemetry/index.js';
import { DownstreamConnection } from './connection.js';
import type { ServerDefinitions } from './serverDefinitions.js';
import type { EraMemory, EraVerdict } from './era.js';
import { InFlightCallers } from './inFlightCallers.js';
import type { OAuthRecords } from './oauthRecords.js';
import type { PrincipalAuthorizations } from './principalAuthorizations.js';
import { PrincipalConnections } from './principalConnections.js';
import { stopSandbox } from './sandbox.js';
import type { PoolEvent, PoolOptions, ServerRuntimeStatus, StartOptions } from './poolTypes.js';
export type { PoolEvent } from './poolTypes.js';
import type { RequestOptions } from './requestLayer.js';

/** Owns every downstream connection. */
export class ServerPool {
  /** The server configs: their one owner (the catalog builds from them and hears 'configured'). */
  #configs: Readonly<Record<string, ServerConfig>>;
  readonly #options: PoolOptions;
  readonly #connections = new Map<string, DownstreamConnection>();
  readonly #starting = new Map<string, Promise<DownstreamConnection>>();
  readonly #inFlight = new Map<string, number>();
  /** Servers kept from stopping when idle (see hold), and by how many holders. */
  readonly #holds = new Map<string, number>();
  readonly #idleTimers = new KeyedTimers();
  readonly #lastErrors = new Map<string, string>();
  readonly #stopping = new Set<DownstreamConnection>();
  /** Servers whose live connection was opened with a config that has since changed. */
  readonly #outdated = new Set<string>();
  readonly #listeners = new Set<(event: PoolEvent) => void>();
  // Aborts starts still in their handshake when the pool closes, so shutdown does not wait for them.
  readonly #closing = new AbortController();
  readonly #callers = new InFlightCallers();
  /** Where the era each server spoke last is found (the catalog cache keeps it). */
  #eraMemory: EraMemory | undefined;
  /** Servers whose remembered era turned out stale: their next start probes. */
  readonly #staleEras = new Set<string>();
  #closed: Promise<void> | undefined;
  /** Each principal's connections to the `credentials: per-user` servers. */
  readonly #principals: PrincipalConnections;

  constructor(configs: Record<string, ServerConfig>, options: PoolOptions) {
    this.#configs = configs;
    this.#options = options;
    this.#principals = new PrincipalConnections({
      records: options.oauthRecords,
      env: options.env ?? process.env,
      callers: this.#callers,
      configOf: (server) => this.#usableConfig(server),
      open: async (server, config, { oauthRecords, relayAs, onClose }) => {
        const era = await this.#eraMemory?.(server).catch(() => undefined);
        return this.#open(server, config, { era, oauthRecords, signal: this.#closing.signal, relayAs, onClose });
      },
    });
  }

  /** Where principals authorize the `credentials: per-user` servers (none without OAuth records). */
  get authorizations(): PrincipalAuthorizations | undefined {
    return this.#principals.authorizations;
  }

  /** Every configured server's config, enabled or not, by name. */
  get configs(): Readonly<Record<string, ServerConfig>> {
    return this.#configs;
  }

  /** The config of a server, if configured. */
  config(server: string): ServerConfig | undefined {
    return Object.hasOwn(this.#configs, server) ? this.#configs[server] : undefined;
  }

  /** Subscribe to connection events; returns the unsubscribe function. */
  onEvent(listener: (event: PoolEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Replace the server configs (after a servers.yaml edit). Servers removed, disabled or
   * changed are stopped once idle, so their next use starts them with the new config.
   */
  configure(configs: Record<string, ServerConfig>): void {
    const previous = this.#configs;
    this.#configs = configs;
    for (const [server, oldConfig] of Object.entries(previous)) {
      const next = this.config(server);
      if (!next || !next.enabled || !isDeepStrictEqual(withoutTools(oldConfig), withoutTools(next))) {
        void this.#principals.stopServer(server);
        if (!this.#connections.has(server)) continue;
        // A connection busy with calls is stopped when its last call ends (see #endUse).
        if (this.#inFlightTo(server) === 0) void this.#stop(server);
        else this.#outdated.add(server);
      }
    }
    this.#emit({ type: 'configured' });
  }

  /** Have each start look up the era the server spoke last, to skip the probe (set by the catalog). */
  useEraMemory(memory: EraMemory): void {
    this.#eraMemory = memory;
  }

  /** Whether a live connection exists now. */
  isConnected(server: string): boolean {
    return this.#connections.has(server);
  }

  /** State of one server for displays. */
  status(server: string): ServerRuntimeStatus {
    const state = this.#connections.has(server) ? 'connected' : this.#starting.has(server) ? 'starting' : 'stopped';
    const lastError = this.#lastErrors.get(server);
    const era = this.#connections.get(server)?.era;
    return { state, inFlight: this.#inFlightTo(server), ...(era ? { era } : {}), ...(lastError ? { lastError } : {}) };
  }

  /** The live connection to `server`, starting it if needed. Concurrent callers share one start. */
  connection(server: string, options: StartOptions = {}): Promise<DownstreamConnection> {
    this.#assertOpen();
    const live = this.#connections.get(server);
    if (live) return Promise.resolve(live);
    const pending = this.#starting.get(server);
    if (pending) return pending;
    const config = this.#usableConfig(server);
    const start = this.#start(server, config, options).finally(() => this.#starting.delete(server));
    this.#starting.set(server, start);
    return start;
  }

  /**
   * Send one request to `server`, starting it if needed, and return its result unchanged. The
   * idle clock stops while it runs, and `options.caller` answers the server's sampling and
   * elicitation requests meanwhile.
   */
  async request(
    server: string,
    method: string,
    params: Record<string, unknown> | undefined,
    options: RequestOptions = {},
  ): Promise<Record<string, unknown>> {
    if (this.#principals.serves(server))
      return this.#principals.request(server, options, (connection) => connection.request(method, params, options));
    this.#beginUse(server);
    const endCall = options.caller ? this.#callers.add(server, options.caller) : undefined;
    try {
      // Only a start needs an AbortSignal; making one for every request would cost more than the rest of it.
      const connection = this.#connections.get(server) ?? (await this.connection(server, { signal: options.cancellation?.signal }));
      try {
        return await connection.request(method, params, options);
      } catch (error) {
        return await this.#retryOnNewSession(server, connection, error, { signal: options.cancellation?.signal }, (next) =>
          next.request(method, params, options),
        );
      }
    } finally {
      endCall?.();
      this.#endUse(server);
    }
  }

  /** Forward one tools/call (see request). */
  callTool(server: string, tool: string, args: Record<string, unknown> | undefined, options: RequestOptions = {}): Promise<CallToolResult> {
    return this.request(
      server,
      'tools/call',
      args === undefined ? { name: tool } : { name: tool, arguments: args },
      options,
    ) as Promise<CallToolResult>;
  }

  /** List a server's tools, starting it if needed. */
  listTools(server: string, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<Tool[]> {
    return this.#listing(server, options, (connection) => connection.listTools(options));
  }

  /** List everything a server offers (tools, prompts, resources, templates), starting it if needed. */
  listDefinitions(server: string, options: StartOptions = {}): Promise<ServerDefinitions> {
    return this.#listing(server, options, (connection) => connection.listDefinitions(options));
  }

  // A per-user server is listed with the token of the principal who last used or authorized it,
  // else with the shared one `loadout auth` stores (which its calls never use).
  #listing<T>(server: string, options: StartOptions, use: (connection: DownstreamConnection) => Promise<T>): Promise<T> {
    const principal = this.#principals.listingPrincipal(server);
    return principal ? this.#principals.request(server, { principal }, use) : this.#whileInUse(server, options, use);
  }

  // Run `use` on the server's connection (started if needed) with the idle clock stopped meanwhile.
  async #whileInUse<T>(server: string, options: StartOptions, use: (connection: DownstreamConnection) => Promise<T>): Promise<T> {
    this.#beginUse(server);
    try {
      const connection = await this.connection(server, options);
      try {
        return await use(connection);
      } catch (error) {
        return await this.#retryOnNewSession(server, connection, error, options, use);
      }
    } finally {
      this.#endUse(server);
    }
  }

  /** End a lazy server's connection unless a call is in flight or it is held (always-on servers stay). */
  async stopIfIdle(server: string): Promise<void> {
    if (this.config(server)?.always_on || this.#busy(server)) return;
    await this.#stop(server);
  }

  /**
   * Keep `server` from stopping when idle until the returned function is called (once counts): a
   * resource subscription waits for updates from a server that no call may use for hours. A
   * changed config still restarts it; after a crash, starting it again is the holder's business.
   */
  hold(server: string): () => void {
    this.#holds.set(server, (this.#holds.get(server) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const remaining = (this.#holds.get(server) ?? 1) - 1;
      if (remaining > 0) return void this.#holds.set(server, remaining);
      this.#holds.delete(server);
      if (this.#inFlightTo(server) === 0) this.#startIdleClock(server);
    };
  }

  // Ends a server's connection (no-op when stopped).
  async #stop(server: string): Promise<void> {
    this.#idleTimers.clear(server);
    this.#outdated.delete(server);
    const connection = this.#connections.get(server);
    if (!connection) return;
    this.#connections.delete(server);
    this.#stopping.add(connection);
    try {
      await connection.close();
    } finally {
      this.#stopping.delete(connection);
      this.#emit({ type: 'stopped', server });
    }
  }

  /**
   * End a connection that stopped answering (a failed ping) as if it had crashed: it is
   * reported as 'lost', and the next use starts a new one. With `only`, nothing happens unless
   * that is still the live connection (it may have been replaced meanwhile).
   */
  async discard(server: string, reason: string, only?: DownstreamConnection): Promise<void> {
    const connection = this.#connections.get(server);
    if (!connection || (only && only !== connection)) return;
    this.#markLost(server, reason);
    await connection.close();
  }

  /**
   * Give up on every request under way downstream (a drain's limit passed): each server is told
   * (notifications/cancelled) and each caller gets `reason`. Connections stay until close().
   */
  cancelRequests(reason: Error): void {
    for (const connection of this.#connections.values()) connection.cancelRequests(reason);
    this.#principals.cancelRequests(reason);
  }

  /** Stop every connection; later use is refused. Runs once. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      // All at once: the aborted starts end their children while the connected ones are stopped.
      this.#closing.abort(new LoadoutError('CLOSED', 'loadout is shutting down'));
      const stops = [...this.#connections.keys()].map((server) => this.#stop(server));
      await Promise.allSettled([...this.#starting.values(), ...stops, this.#principals.close()]);
      // Its children are gone: the sandbox's proxy goes too, unless another pool's still run in it.
      await stopSandbox();
    })();
    return this.#closed;
  }

  /**
   * After `error` from `connection`: a session the server no longer knows (it restarted:
   * SESSION_LOST, so nothing was processed), or a remembered era the server refused (ERA_STALE),
   * is replaced at once and `retry` runs once on the new connection, so the caller sees a slower
   * answer rather than an error. Anything else is rethrown.
   */
  async #retryOnNewSession<T>(
    server: string,
    connection: DownstreamConnection,
    error: unknown,
    start: StartOptions,
    retry: (connection: DownstreamConnection) => Promise<T>,
  ): Promise<T> {
    if (isLoadoutError(error, 'ERA_STALE')) {
      this.#options.logger.info({ mod: 'downstream', server }, 'remembered era refused; probing the server again and retrying once');
      this.#staleEras.add(server);
    } else if (isLoadoutError(error, 'SESSION_LOST')) {
      this.#options.logger.info({ mod: 'downstream', server }, 'session lost (server restarted); re-initializing and retrying once');
    } else throw error;
    void this.discard(server, errorMessage(error), connection);
    return retry(await this.connection(server, start));
  }

  async #start(server: string, config: ServerConfig, options: StartOptions): Promise<DownstreamConnection> {
    const logger = this.#options.logger.child({ mod: 'downstream', server });
    const startedAt = performance.now();
    let connection: DownstreamConnection | undefined;
    try {
      // The stale mark is spent by this start whether or not it was asked to probe anyway.
      const stale = this.#staleEras.delete(server);
      const probe = options.probeEra === true || stale;
      const era = probe ? undefined : await this.#eraMemory?.(server).catch(() => undefined);
      connection = await this.#open(server, config, {
        era,
        oauthRecords: this.#options.oauthRecords,
        signal: options.signal ? AbortSignal.any([options.signal, this.#closing.signal]) : this.#closing.signal,
        timeoutMs: options.timeoutMs,
        relayAs: server,
        onClose: () => connection && this.#onConnectionClosed(server, connection),
      });
      if (this.#closed) {
        await connection.close();
        throw new LoadoutError('CLOSED', 'loadout is shutting down');
      }
      this.#connections.set(server, connection);
      this.#lastErrors.delete(server);
      logger.info({ ms: Math.round(performance.now() - startedAt), era: connection.era }, 'server started');
      this.#emit({ type: 'connected', server });
      return connection;
    } catch (error) {
      this.#lastErrors.set(server, errorMessage(error));
      logger.warn({ err: errorMessage(error) }, 'server failed to start');
      throw error;
    }
  }

  // Open a connection to `server`; `relayAs` names the callers its requests to the client go to.
  // Only the shared one speaks for the server: a principal's passes on list changes alone.
  #open(
    server: string,
    config: ServerConfig,
    options: {
      era?: EraVerdict;
      oauthRecords?: OAuthRecords;
      signal: AbortSignal;
      timeoutMs?: number;
      relayAs: string;
      onClose: () => void;
    },
  ): Promise<DownstreamConnection> {
    const { relayAs } = options;
    return DownstreamConnection.open(server, config, {
      ...options,
      logger: this.#options.logger.child({ mod: 'downstream', server }),
      env: this.#options.env,
      telemetry: this.#options.telemetry ?? TELEMETRY_OFF,
      ...(this.#options.protectedDirs ? { protectedDirs: this.#options.protectedDirs } : {}),
      shutdown: this.#closing.signal,
      timeoutMs: options.timeoutMs ?? Math.max(config.timeout_seconds * 1000, this.#options.minStartTimeoutMs ?? 0),
      onNotification: ({ method, params }) => {
        if (relayAs !== server && !method.endsWith('/list_changed')) return;
        if (method === 'notifications/tools/list_changed') this.#emit({ type: 'tools-changed', server });
        this.#emit({ type: 'notification', server, notification: params === undefined ? { method } : { method, params } });
      },
      onRelayedRequest: (request, signal) => this.#callers.relay(relayAs, request, signal),
    });
  }

  #onConnectionClosed(server: string, connection: DownstreamConnection): void {
    if (this.#stopping.has(connection) || this.#connections.get(server) !== connection) return;
    this.#markLost(server, 'connection lost');
  }

  #markLost(server: string, reason: string): void {
    this.#connections.delete(server);
    this.#outdated.delete(server);
    this.#idleTimers.clear(server);
    this.#lastErrors.set(server, reason);
    this.#options.logger.warn({ mod: 'downstream', server, reason }, 'server connection lost');
    this.#emit({ type: 'lost', server });
  }

  #usableConfig(server: string): ServerConfig {
    const config = this.config(server);
    if (!config) {
      const known = Object.keys(this.#configs).join(', ') || '(none)';
      throw new LoadoutError('SERVER_NOT_FOUND', `Server '${server}' is not configured; configured servers: ${known}`);
    }
    if (!config.enabled) throw new LoadoutError('SERVER_DISABLED', `Server '${server}' is disabled in servers.yaml (enabled: false)`);
    return config;
  }

  // The idle timer is left running during a call: if it fires, the call in flight keeps the server
  // up, and the call's end sets it again (restarting it in place, cheaper than a new timer).
  #beginUse(server: string): void {
    this.#inFlight.set(server, this.#inFlightTo(server) + 1);
  }

  #endUse(server: string): void {
    const remaining = this.#inFlightTo(server) - 1;
    if (remaining > 0) {
      this.#inFlight.set(server, remaining);
      return;
    }
    this.#inFlight.delete(server);
    if (this.#outdated.has(server)) {
      void this.#stop(server);
      return;
    }
    this.#startIdleClock(server);
  }

  // Lazy servers stop after a quiet period with no call in flight and nobody holding them.
  #startIdleClock(server: string): void {
    const config = this.config(server);
    if (!config || config.always_on || this.#holds.has(server) || !this.#connections.has(server)) return;
    // KeyedTimers waits out delays longer than a Node timer holds (~24.8 days) itself.
    this.#idleTimers.set(server, config.idle_timeout_minutes * 60_000, () => {
      if (!this.#busy(server)) void this.#stop(server);
    });
  }

  #busy(server: string): boolean {
    return this.#inFlightTo(server) > 0 || this.#holds.has(server);
  }

  #inFlightTo(server: string): number {
    return this.#inFlight.get(server) ?? 0;
  }

  #emit(event: PoolEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        this.#options.logger.error({ err: errorMessage(error) }, 'pool event listener failed');
      }
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new LoadoutError('CLOSED', 'loadout is shutting down');
  }
}

function withoutTools(config: ServerConfig): Omit<ServerConfig, 'tools'> {
  const { tools: _tools, ...rest } = config;
  return rest;
}
