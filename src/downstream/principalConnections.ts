// The connections to servers whose entry says `credentials: per-user`: one per (server, principal),
// each opened with that principal's own OAuth record and nothing else, so a request never goes
// with another principal's token (nor with the client's token to loadout, which no connection has).
// Started on first use (concurrent uses share one start), stopped when idle, when the server's
// config changes and when the pool closes. The pool routes to them; they emit no pool events but
// list changes, since a connection of one principal says nothing of the server's availability.
import type { ServerConfig } from '../config/index.js';
import { KeyedTimers, LoadoutError, isLoadoutError } from '../shared/index.js';
import type { DownstreamConnection } from './connection.js';
import type { InFlightCallers } from './inFlightCallers.js';
import { principalOAuthRecords, principalSlot, type OAuthRecords } from './oauthRecords.js';
import { PrincipalAuthorizations } from './principalAuthorizations.js';
import type { RequestOptions } from './requestLayer.js';

/** The request of a principal who has not authorized a per-user server yet (or whose authorization ended). */
export class PrincipalAuthorizationNeeded extends LoadoutError {
  constructor(
    readonly server: string,
    readonly principal: string,
  ) {
    super('NEEDS_AUTHORIZATION', `Server '${server}' needs your own authorization (its credentials are per user)`);
  }
}

/** What the pool lends its principals' connections. */
interface PrincipalConnectionsOptions {
  /** Where OAuth records live: each principal's are kept beside the shared ones (principalOAuthRecords). */
  records: OAuthRecords | undefined;
  env: NodeJS.ProcessEnv;
  /** The pool's callers: a slot's relayed requests go to the callers registered under the slot. */
  callers: InFlightCallers;
  /** The server's config, if it is configured and enabled (else throws). */
  configOf(server: string): ServerConfig;
  /** Open a connection to `server` with `oauthRecords`, relaying what it asks to the callers of `relayAs`. */
  open(
    server: string,
    config: ServerConfig,
    how: { oauthRecords: OAuthRecords | undefined; relayAs: string; onClose: () => void },
  ): Promise<DownstreamConnection>;
}

/** Every principal's connections to the per-user servers. */
export class PrincipalConnections {
  readonly #options: PrincipalConnectionsOptions;
  /** Where principals authorize the per-user servers (none without OAuth records). */
  readonly authorizations: PrincipalAuthorizations | undefined;
  readonly #live = new Map<string, Promise<DownstreamConnection>>();
  readonly #inFlight = new Map<string, number>();
  readonly #idle = new KeyedTimers();
  /** By server: the principal whose connection answered last, whose token discovery may use. */
  readonly #lastAnswered = new Map<string, string>();
  #closed = false;

  constructor(options: PrincipalConnectionsOptions) {
    this.#options = options;
    const { records, env } = options;
    this.authorizations =
      records &&
      new PrincipalAuthorizations({
        records,
        env,
        configOf: (server) => options.configOf(server),
        onAuthorized: (server, principal) => this.#lastAnswered.set(server, principal),
      });
  }

  /** Whether `server`'s requests go with each principal's own credentials. */
  serves(server: string): boolean {
    try {
      const config = this.#options.configOf(server);
      return config.type !== 'stdio' && config.credentials === 'per-user';
    } catch {
      return false;
    }
  }

  /**
   * Run `use` on the connection of the principal `options` names (a request that names none is
   * refused); that principal's callers answer what the server asks meanwhile.
   */
  async request<T>(server: string, options: RequestOptions, use: (connection: DownstreamConnection) => Promise<T>): Promise<T> {
    const { principal, caller } = options;
    if (principal === undefined)
      throw new LoadoutError('NEEDS_AUTHORIZATION', `Server '${server}' takes each user's own authorization; this request names no user`);
    const idleMs = this.#options.configOf(server).idle_timeout_minutes * 60_000;
    const endCall = caller ? this.#options.callers.add(principalSlot(server, principal), caller) : undefined;
    try {
      return await this.#use(server, principal, idleMs, use);
    } finally {
      endCall?.();
    }
  }

  // Run `use` on `principal`'s connection to `server` (started if needed), then stop it after
  // `idleMs` without use. A principal with no usable authorization gets PrincipalAuthorizationNeeded.
  async #use<T>(server: string, principal: string, idleMs: number, use: (connection: DownstreamConnection) => Promise<T>): Promise<T> {
    if (this.#closed) throw new LoadoutError('CLOSED', 'loadout is shutting down');
    const slot = principalSlot(server, principal);
    this.#idle.clear(slot);
    this.#inFlight.set(slot, (this.#inFlight.get(slot) ?? 0) + 1);
    try {
      const connection = await this.#connection(server, principal, slot);
      const result = await use(connection).catch(async (error: unknown) => {
        if (!isLoadoutError(error, 'NEEDS_AUTHORIZATION') && !isLoadoutError(error, 'SESSION_LOST')) throw error;
        // A refused token ends the connection; a session the server forgot is opened again, once.
        await this.#stop(slot, connection);
        if (isLoadoutError(error, 'NEEDS_AUTHORIZATION')) throw this.#needsAuthorization(server, principal);
        return use(await this.#connection(server, principal, slot));
      });
      this.#lastAnswered.set(server, principal);
      return result;
    } finally {
      const remaining = (this.#inFlight.get(slot) ?? 1) - 1;
      if (remaining > 0) this.#inFlight.set(slot, remaining);
      else {
        this.#inFlight.delete(slot);
        this.#idle.set(slot, idleMs, () => void this.#stop(slot));
      }
    }
  }

  /** For a per-user server, the principal whose token lists its tools: the one that last worked, if any. */
  listingPrincipal(server: string): string | undefined {
    return this.serves(server) ? this.#lastAnswered.get(server) : undefined;
  }

  /** Stop every principal's connection to `server` (its config changed, or it is gone). */
  async stopServer(server: string): Promise<void> {
    this.#lastAnswered.delete(server);
    const slots = [...this.#live.keys()].filter((slot) => slot.startsWith(`${server}@`));
    await Promise.allSettled(slots.map((slot) => this.#stop(slot)));
  }

  /** Stop every connection; later use is refused. */
  /** Give up on every request under way on every principal's connection, each caller getting `reason`. */
  cancelRequests(reason: Error): void {
    for (const live of this.#live.values()) void live.then((connection) => connection.cancelRequests(reason)).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...[...this.#live.keys()].map((slot) => this.#stop(slot)), this.authorizations?.close()]);
  }

  #connection(server: string, principal: string, slot: string): Promise<DownstreamConnection> {
    const live = this.#live.get(slot);
    if (live) return live;
    const { records } = this.#options;
    const oauthRecords = records && principalOAuthRecords(records, principal);
    const onClose = (): void => {
      if (this.#live.get(slot) === opening) this.#live.delete(slot);
    };
    const opening = this.#options
      .open(server, this.#options.configOf(server), { oauthRecords, relayAs: slot, onClose })
      .catch((error: unknown) => {
        if (this.#live.get(slot) === opening) this.#live.delete(slot);
        throw isLoadoutError(error, 'NEEDS_AUTHORIZATION') ? this.#needsAuthorization(server, principal) : error;
      });
    this.#live.set(slot, opening);
    return opening;
  }

  // A principal whose authorization stopped working no longer lists the server for everyone.
  #needsAuthorization(server: string, principal: string): PrincipalAuthorizationNeeded {
    if (this.#lastAnswered.get(server) === principal) this.#lastAnswered.delete(server);
    return new PrincipalAuthorizationNeeded(server, principal);
  }

  async #stop(slot: string, only?: DownstreamConnection): Promise<void> {
    this.#idle.clear(slot);
    const live = this.#live.get(slot);
    if (!live) return;
    const connection = await live.catch(() => undefined);
    if (!connection || (only && connection !== only) || this.#live.get(slot) !== live) return;
    this.#live.delete(slot);
    await connection.close();
  }
}
