// What the client sessions share about downstream notifications: resource subscriptions (one
// downstream subscription per server and URI, however many sessions hold it; its server kept
// from stopping when idle; re-established when the server starts again; ended by a revocation), logging levels (each server gets the most verbose level any of
// its sessions asked for), and the fan-out of downstream log messages, resource updates and
// loadout's own events to the sessions that use each server, filtered by each session's level.
// A 2026-07-28 session has no level of its own: a server's log messages go to its requests in
// flight to that server, each at the level the request names in its `_meta` (none when it names none).
import type { LoggingLevel, ServerNotification } from '@modelcontextprotocol/server';
import { LoggingLevelSchema } from '@modelcontextprotocol/core';
import type { CatalogStore, ResourceTarget } from '../catalog/index.js';
import type { ServerPool } from '../downstream/index.js';
import { errorMessage, type Logger } from '../shared/index.js';
import { withTaskId, type TaskRoutes } from './taskRoutes.js';

/** Until a session sets a level, it hears notices and worse (downstream debug and info chatter stays out). */
export const DEFAULT_SESSION_LOG_LEVEL: LoggingLevel = 'notice';

const SEVERITY: ReadonlyMap<string, number> = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/** A client session as the hub sees it. */
export interface HubMember {
  /** The servers the session uses now. */
  servers(): ReadonlySet<string>;
  /** Send a notification to the client (failures are the member's to log). */
  send(notification: ServerNotification): void;
  /** Whether the session speaks 2026-07-28, where log levels are per request, not per session. */
  servesModernEra(): boolean;
}

/** A 2026-07-28 request in flight to a server, hearing that server's log messages at its level. */
export interface RequestLogWatch {
  /** The client session: a message goes to one of its requests, not to each. */
  readonly owner: object;
  readonly level: LoggingLevel;
  send(notification: ServerNotification): void;
}

/** Dependencies of the hub. */
export interface SessionHubOptions {
  pool: ServerPool;
  catalog: CatalogStore;
  tasks: TaskRoutes;
  logger: Logger;
}

interface MemberState {
  level: LoggingLevel | undefined;
  /** Subscription key → the URI the client subscribed with. */
  subscriptions: Map<string, string>;
  /** URIs the client subscribed with whose subscription a revocation ended (endSubscriptions), until it unsubscribes. */
  ended: Set<string>;
}

/** Shared subscription, logging and notification state of all sessions. */
export class SessionHub {
  readonly #options: SessionHubOptions;
  readonly #members = new Map<HubMember, MemberState>();
  /** Subscription key (server + downstream URI) → the members holding it. */
  readonly #subscribers = new Map<string, Set<HubMember>>();
  /** Subscription key → what keeps its server from stopping when idle, released by the last holder. */
  readonly #serverHolds = new Map<string, () => void>();
  /** The level last sent to each server. */
  readonly #serverLevels = new Map<string, LoggingLevel>();
  /** Subscription key → its downstream subscription while the request is on its way. */
  readonly #subscribing = new Map<string, Promise<void>>();
  /** Server → the 2026-07-28 requests in flight to it that asked for its log messages. */
  readonly #requestLogs = new Map<string, RequestLogWatch[]>();

  constructor(options: SessionHubOptions) {
    this.#options = options;
  }

  /** Add a session; returns the function that removes it (dropping its subscriptions). */
  join(member: HubMember): () => void {
    this.#members.set(member, { level: undefined, subscriptions: new Map(), ended: new Set() });
    return () => {
      const state = this.#members.get(member);
      if (!state) return;
      for (const key of state.subscriptions.keys()) void this.#release(member, key);
      this.#members.delete(member);
      this.#options.tasks.dropOwner(member);
    };
  }

  /**
   * Subscribe `member` to `target`, which its client calls `exposedUri`. The first subscriber
   * subscribes downstream, through `subscribeDownstream` (the client's own forwarded request); the
   * others wait for that. The member hears updates from the moment the request is sent: one the
   * server sends right after its answer is read before the answer is.
   */
  async subscribe(
    member: HubMember,
    target: ResourceTarget,
    exposedUri: string,
    subscribeDownstream: () => Promise<unknown>,
  ): Promise<void> {
    const key = subscriptionKey(target);
    const holders = this.#subscribers.get(key) ?? new Set();
    this.#subscribers.set(key, holders);
    holders.add(member);
    const state = this.#members.get(member);
    state?.subscriptions.set(key, exposedUri);
    state?.ended.delete(exposedUri);
    let subscribed = this.#subscribing.get(key);
    if (!subscribed && !this.#serverHolds.has(key)) {
      // A subscribed lazy server must stay up to send updates, however long no call uses it.
      const release = this.#options.pool.hold(target.server);
      subscribed = subscribeDownstream().then(
        () => {
          // Every holder may have let go while the request was on its way.
          if (this.#subscribers.get(key)?.size) this.#serverHolds.set(key, release);
          else release();
        },
        (error: unknown) => {
          release();
          throw error;
        },
      );
      this.#subscribing.set(key, subscribed);
      void subscribed.finally(() => this.#subscribing.delete(key)).catch(() => undefined);
    }
    try {
      await subscribed;
    } catch (error) {
      this.#members.get(member)?.subscriptions.delete(key);
      holders.delete(member);
      if (holders.size === 0 && this.#subscribers.get(key) === holders) this.#subscribers.delete(key);
      throw error;
    }
  }

  /** Whether any session holds a subscription to a resource of `server`. */
  hasSubscriptions(server: string): boolean {
    for (const key of this.#subscribers.keys()) if (key.startsWith(`${server}\n`)) return true;
    return false;
  }

  /** Drop `member`'s subscription to `target`; the last one out unsubscribes downstream. */
  async unsubscribe(member: HubMember, target: ResourceTarget): Promise<void> {
    await this.#release(member, subscriptionKey(target));
  }

  /**
   * End `member`'s subscriptions to the resources `ended` picks, as its unsubscribing would (the
   * last holder's ends downstream); returns the URIs its client subscribed with. The client may
   * not know yet: its later unsubscribe of one is answered by forgetEnded.
   */
  endSubscriptions(member: HubMember, ended: (target: ResourceTarget) => boolean): string[] {
    const state = this.#members.get(member);
    if (!state) return [];
    const uris: string[] = [];
    for (const [key, exposedUri] of state.subscriptions) {
      if (!ended(targetOf(key))) continue;
      uris.push(exposedUri);
      state.ended.add(exposedUri);
      void this.#release(member, key);
    }
    return uris;
  }

  /** Whether `exposedUri` names a subscription of `member` that endSubscriptions ended (forgotten now: there is nothing left to release). */
  forgetEnded(member: HubMember, exposedUri: string): boolean {
    return this.#members.get(member)?.ended.delete(exposedUri) ?? false;
  }

  /** Set `member`'s level and send each server it uses that logs the most verbose level wanted of it. */
  async setLevel(member: HubMember, level: LoggingLevel): Promise<void> {
    const state = this.#members.get(member);
    if (state) state.level = level;
    await Promise.all([...member.servers()].map((server) => this.#applyLevel(server, false)));
  }

  /** Have `watch` hear `server`'s log messages until the returned function is called. */
  watchRequestLogs(server: string, watch: RequestLogWatch): () => void {
    const watches = this.#requestLogs.get(server) ?? [];
    watches.push(watch);
    this.#requestLogs.set(server, watches);
    return () => {
      const index = watches.indexOf(watch);
      if (index >= 0) watches.splice(index, 1);
      if (watches.length === 0 && this.#requestLogs.get(server) === watches) this.#requestLogs.delete(server);
    };
  }

  /** Route a notification a downstream server sent (log messages and resource updates). */
  onServerNotification(server: string, notification: { method: string; params?: Record<string, unknown> }): void {
    if (notification.method === 'notifications/message') {
      const params = notification.params ?? {};
      const level = typeof params.level === 'string' ? (params.level as LoggingLevel) : 'info';
      const logger = typeof params.logger === 'string' ? `${server}/${params.logger}` : server;
      this.#tell(server, level, { method: 'notifications/message', params: { ...params, level, logger, data: params.data } });
    } else if (notification.method === 'notifications/tasks/status') {
      // Only the session that created the task hears of it, under its loadout id.
      const taskId = notification.params?.taskId;
      const known = typeof taskId === 'string' ? this.#options.tasks.fromDownstream({ server, taskId }) : undefined;
      if (known && this.#members.has(known.owner as HubMember)) {
        // Task status is 2025-11-25 vocabulary the SDK's typed union no longer lists; it is sent as is.
        (known.owner as HubMember).send({
          method: 'notifications/tasks/status',
          params: withTaskId(notification.params!, known.id),
        } as unknown as ServerNotification);
      }
    } else if (notification.method === 'notifications/resources/updated') {
      const uri = notification.params?.uri;
      if (typeof uri !== 'string') return;
      const key = subscriptionKey({ server, uri });
      for (const member of this.#subscribers.get(key) ?? []) {
        const exposedUri = this.#members.get(member)?.subscriptions.get(key) ?? uri;
        member.send({ method: 'notifications/resources/updated', params: { ...notification.params, uri: exposedUri } });
      }
    }
  }

  /** A server (re)connected: re-establish its subscriptions and its logging level. */
  async onServerConnected(server: string): Promise<void> {
    this.#serverLevels.delete(server);
    const uris = [...this.#subscribers]
      // A subscription still on its way (perhaps what started the server) is not made twice.
      .filter(([key, holders]) => holders.size > 0 && key.startsWith(`${server}\n`) && !this.#subscribing.has(key))
      .map(([key]) => key.slice(server.length + 1));
    await Promise.all([
      this.#applyLevel(server, true),
      ...uris.map((uri) =>
        this.#request(server, 'resources/subscribe', { uri }).catch((error: unknown) => {
          this.#options.logger.warn(
            { mod: 'gateway', server, uri, err: errorMessage(error) },
            'could not re-establish a resource subscription',
          );
        }),
      ),
    ]);
  }

  /** Tell the sessions using `server` about something loadout saw happen to it (logger "loadout"). */
  announce(server: string, level: LoggingLevel, message: string): void {
    this.#tell(server, level, { method: 'notifications/message', params: { level, logger: 'loadout', data: { server, message } } });
  }

  /**
   * Tell one 2025 session something loadout did to it (logger "loadout"), if its level admits it.
   * A 2026-07-28 session has no channel for it: its log messages ride its own requests.
   */
  announceTo(member: HubMember, level: LoggingLevel, data: Record<string, unknown>): void {
    const state = this.#members.get(member);
    if (!state || member.servesModernEra() || !admits(state, SEVERITY.get(level) ?? 0)) return;
    member.send({ method: 'notifications/message', params: { level, logger: 'loadout', data } });
  }

  // Requests loadout makes on its own, with no client request waiting on them (re-subscribing after
  // a restart, levels, the last unsubscribe): straight to the pool; callers log failures.
  #request(server: string, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.#options.pool.request(server, method, params);
  }

  #tell(server: string, level: LoggingLevel, notification: ServerNotification): void {
    const severity = SEVERITY.get(level) ?? 0;
    this.#tellRequests(server, severity, notification);
    for (const [member, state] of this.#members) {
      if (member.servesModernEra() || !member.servers().has(server) || !admits(state, severity)) continue;
      member.send(notification);
    }
  }

  // JSON-RPC does not say which request a log message belongs to: each client session with
  // requests in flight to the server hears it once, on its latest request whose level admits it.
  #tellRequests(server: string, severity: number, notification: ServerNotification): void {
    const watches = this.#requestLogs.get(server);
    if (!watches) return;
    const told = new Set<object>();
    for (let index = watches.length - 1; index >= 0; index--) {
      const watch = watches[index]!;
      if (told.has(watch.owner) || severity < SEVERITY.get(watch.level)!) continue;
      told.add(watch.owner);
      watch.send(notification);
    }
  }

  async #release(member: HubMember, key: string): Promise<void> {
    this.#members.get(member)?.subscriptions.delete(key);
    const holders = this.#subscribers.get(key);
    if (!holders?.delete(member) || holders.size > 0) return;
    this.#subscribers.delete(key);
    this.#serverHolds.get(key)?.();
    this.#serverHolds.delete(key);
    const { server, uri } = targetOf(key);
    // A stopped server has no subscription to end; starting it just to unsubscribe would be waste.
    if (!this.#options.pool.isConnected(server)) return;
    await this.#request(server, 'resources/unsubscribe', { uri }).catch((error: unknown) => {
      this.#options.logger.debug({ mod: 'gateway', server, err: errorMessage(error) }, 'resources/unsubscribe failed');
    });
  }

  // The most verbose level any session using `server` set; sent only to a running server that logs.
  async #applyLevel(server: string, force: boolean): Promise<void> {
    const levels = [...this.#members]
      .filter(([member, state]) => state.level && member.servers().has(server))
      .map(([, state]) => state.level!);
    if (!levels.length) return;
    const level = levels.reduce((a, b) => (SEVERITY.get(a)! <= SEVERITY.get(b)! ? a : b));
    if (!force && this.#serverLevels.get(server) === level) return;
    if (!this.#options.pool.isConnected(server) || !this.#options.catalog.current.definitionsOf(server)?.capabilities?.logging) return;
    this.#serverLevels.set(server, level);
    await this.#request(server, 'logging/setLevel', { level }).catch((error: unknown) => {
      this.#serverLevels.delete(server);
      this.#options.logger.debug({ mod: 'gateway', server, err: errorMessage(error) }, 'logging/setLevel failed');
    });
  }
}

function subscriptionKey(target: ResourceTarget): string {
  return `${target.server}\n${target.uri}`;
}

function targetOf(key: string): ResourceTarget {
  const newline = key.indexOf('\n');
  return { server: key.slice(0, newline), uri: key.slice(newline + 1) };
}

// Whether a 2025 session's level (notice until it sets one) lets a message of `severity` through.
function admits(state: MemberState, severity: number): boolean {
  return severity >= SEVERITY.get(state.level ?? DEFAULT_SESSION_LOG_LEVEL)!;
}
