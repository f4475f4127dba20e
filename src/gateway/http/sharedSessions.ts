// 2025-era HTTP sessions any replica can serve, with a team store (src/store): each initialized
// session is a record there (its principal, what its initialize asked for, its equipped set, when
// it was last used). A replica asked for a session it does not hold re-creates it from the record;
// a replica holding one follows its record (an equip made through another replica re-equips the
// copy here, so a GET stream here announces it; a deleted record ends the copy here). A request
// the server makes of the client mid-call (sampling, elicitation) goes out on that call's own POST
// stream, on the replica serving the call, as without a store; the client's answer, if it reaches
// another replica, travels to the waiting one through the record (clientAnswers.ts). Without a
// store none of this runs.
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  WebStandardStreamableHTTPServerTransport,
  isJSONRPCResultResponse,
  type InitializeRequestParams,
  type Transport,
} from '@modelcontextprotocol/server';
import type { Principal } from '../../identity/index.js';
import { LoadoutError, errorMessage, settleWithin, type Logger } from '../../shared/index.js';
import { isStoreAway, type SessionRecord, type TeamStore } from '../../store/index.js';
import type { ConnectOptions } from '../createGateway.js';
import type { GatewaySession } from '../session.js';
import { ClientAnswers, type ClientAnswer } from './clientAnswers.js';
import { resumableStreams } from './sessionEvents.js';

/** Serves one HTTP request of a session (`body`: the parsed POST body). */
export type ServeRequest = (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>;

/** What a session's GatewaySession is connected with, beside its principal. */
export type SharedConnectOptions = Pick<ConnectOptions, 'onEquip' | 'resumedToolset'>;

/** A 2025 session's server transport: the SDK's, whose GET stream a drain ends (the client then reconnects). */
export type SessionTransport = Transport & Pick<WebStandardStreamableHTTPServerTransport, 'closeStandaloneSSEStream'>;

/** What httpServer.ts holds per session: the transport it was given (decorate's) and its GatewaySession. */
interface ConnectedSession {
  readonly transport: SessionTransport;
  readonly session: GatewaySession;
}

/** Connects a GatewaySession to a session's transport (httpServer.ts): the session is then served through `serve`. */
type Attach<S extends ConnectedSession> = (
  id: string,
  transport: SessionTransport,
  serve: ServeRequest,
  principal: Principal,
  options: SharedConnectOptions,
) => Promise<S>;

/** The Node adapter httpServer.ts loads on start (not at module load: stdio never needs it). */
type NodeAdapter = Pick<typeof import('@modelcontextprotocol/node'), 'toNodeHandler'>;

interface Held {
  readonly session: GatewaySession;
  readonly answers: ClientAnswers;
  /** The set the record names, as last written or read here. */
  toolset: string | null;
  /** When this replica last moved the record's `activeAt` on. */
  touchedAtMs: number;
  /** Re-reads of the record, one after another, so equips land in the order they were made. */
  following: Promise<void>;
  /** The record of a session opened while the store was away, not written yet. */
  unrecorded?: SessionRecord | undefined;
  /** The write of `unrecorded` under way. */
  recording?: Promise<boolean> | undefined;
}

/** Options of SharedSessions. */
interface SharedSessionsOptions<S extends ConnectedSession> {
  store: TeamStore;
  node: NodeAdapter;
  attach: Attach<S>;
  /** Sessions unused this long anywhere are deleted; 0 keeps them until DELETE. */
  idleMs: number;
  logger: Logger;
}

/** resume() found the session but this replica has no room for it (the answer, a 503, is sent). */
export const NO_ROOM = Symbol('no room');
/** resume()'s answer for a session another principal started: the caller answers it as unknown, and audits it. */
export const FOREIGN = Symbol('foreign');

// The URL of the initialize replayed on a resumed session's transport: it never leaves the process.
const REPLAY_URL = 'http://loadout.invalid/mcp';
const REPLAY_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
// How long a request waits for its session's record to be read (beforeRequest).
const FRESHNESS_WAIT_MS = 1000;
// A session's record keeps at most this many answers no copy has taken yet (their call ended, say).
const MAX_ANSWERS_KEPT = 16;

/** The 2025 sessions of one HTTP gateway, shared with every replica on the store. */
export class SharedSessions<S extends ConnectedSession> {
  readonly #options: SharedSessionsOptions<S>;
  readonly #log: Logger;
  readonly #held = new Map<string, Held>();
  readonly #resuming = new Map<string, Promise<S | undefined | typeof NO_ROOM | typeof FOREIGN>>();
  readonly #answers = new WeakMap<Transport, ClientAnswers>();
  readonly #stopListening: () => void;
  readonly #sweep: NodeJS.Timeout | undefined;
  // A used session's record moves on at most this often per replica: a forwarded call waits on no write.
  readonly #touchMs: number;

  constructor(options: SharedSessionsOptions<S>) {
    this.#options = options;
    this.#log = options.logger.child({ mod: 'http-sessions' });
    this.#touchMs = options.idleMs / 4;
    this.#stopListening = options.store.onChange((change) => {
      if (change.type === 'resync') for (const id of this.#held.keys()) void this.#follow(id);
      else if (change.kind === 'sessions' && this.#held.has(change.key)) void this.#follow(change.key);
    });
    if (options.idleMs > 0) this.#sweep = setInterval(() => void this.#deleteIdle(), Math.min(options.idleMs, 60_000)).unref();
  }

  /**
   * The transport session `id`'s Server is to connect through (before connect): it hands the
   * client's answers to requests another replica sent on to that replica.
   */
  decorate(id: string, transport: Transport): Transport {
    const answers = new ClientAnswers(transport, (answer) => void this.#relayAnswer(id, answer));
    this.#answers.set(transport, answers);
    return answers;
  }

  /** The options a session `id` is connected with: its equips are recorded before they take effect. */
  connectOptions(id: string): SharedConnectOptions {
    return { onEquip: (toolset) => this.#recordEquip(id, toolset) };
  }

  /** Record the new session `id` (before its id is answered) and follow its record from now on. */
  async record(id: string, principal: Principal, initialize: InitializeRequestParams, state: S): Promise<void> {
    const now = new Date().toISOString();
    const toolset = state.session.snapshot.selection?.toolset ?? null;
    const record: SessionRecord = {
      principal: principal.id,
      protocolVersion: initialize.protocolVersion,
      clientCapabilities: initialize.capabilities,
      clientInfo: initialize.clientInfo,
      toolset,
      createdAt: now,
      activeAt: now,
    };
    try {
      await this.#options.store.sessions.put(id, record, { ifRevision: null });
    } catch (error) {
      if (!isStoreAway(error)) throw error;
      // The store is away: the session opens here, served by this replica alone until its record
      // is written (tried again as it is used, see active()).
      this.#log.warn({ session: id, err: errorMessage(error) }, 'session opened while the store is away; recording it once it is back');
      this.#hold(id, state, toolset, record);
      return;
    }
    this.#hold(id, state, toolset);
  }

  /**
   * Session `id` re-created here from its record, undefined when there is none, or FOREIGN when
   * another principal started it (to be answered alike, so a caller learns nothing of others' sessions).
   * `makeRoom` runs only once a record of this caller's is found: an unknown id ends no copy
   * held here. False from it (no room) gives NO_ROOM, for the caller to answer. Concurrent requests for one session (its
   * GET stream and a POST) share one re-creation; the caller checks whose it is.
   */
  resume(id: string, principal: Principal, makeRoom: () => boolean): Promise<S | undefined | typeof NO_ROOM | typeof FOREIGN> {
    let resuming = this.#resuming.get(id);
    if (!resuming) {
      resuming = this.#resume(id, principal, makeRoom).finally(() => this.#resuming.delete(id));
      this.#resuming.set(id, resuming);
    }
    return resuming;
  }

  /** Session `id` was ended by its client (DELETE): delete its record, and so its copies on every replica. */
  async ended(id: string): Promise<void> {
    this.#held.delete(id);
    await this.#options.store.sessions.delete(id);
  }

  /** A session that never got its id to the client (its initialize failed): its record, if written, goes. */
  async abandoned(id: string): Promise<void> {
    await this.ended(id).catch((error: unknown) =>
      this.#log.warn({ session: id, err: errorMessage(error) }, 'could not delete the record of a session that failed to start'),
    );
  }

  /** The copy `session` here is closed (expiry, room for another, shutdown): the session lives on in its record. */
  dropped(id: string, session: GatewaySession): void {
    if (this.#held.get(id)?.session === session) this.#held.delete(id);
  }

  /**
   * Before a request of session `id`, held here, is served: a POSTed request first brings the copy
   * here up to date with the record (an equip the client made through another replica a moment
   * ago may not have been heard yet), except a call of an equipped tool, which makes no database
   * round trip. A store slower than FRESHNESS_WAIT_MS (unreachable, say) does not hold the request
   * up: it is served with the set held here. Every request marks the session as used.
   */
  async beforeRequest(id: string, body: unknown): Promise<void> {
    this.active(id);
    const held = this.#held.get(id);
    if (!held || !needsCurrentSet(body, held.session)) return;
    await settleWithin(this.#follow(id), FRESHNESS_WAIT_MS);
  }

  /** Session `id` is in use here: move its record's `activeAt` on, if that is due (not waited on). */
  active(id: string): void {
    const held = this.#held.get(id);
    const now = Date.now();
    if (held?.unrecorded) return void this.#recordLate(id, held);
    if (!held || this.#options.idleMs === 0 || now - held.touchedAtMs < this.#touchMs) return;
    held.touchedAtMs = now;
    const activeAt = new Date(now).toISOString();
    this.#options.store.sessions
      .update(id, (record) => record && { ...record, activeAt })
      .catch((error: unknown) => this.#log.warn({ session: id, err: errorMessage(error) }, 'could not mark the session as used'));
  }

  /** Stop following records (the copies here are closed by their owner). */
  close(): void {
    this.#stopListening();
    clearInterval(this.#sweep);
    this.#held.clear();
  }

  #hold(id: string, { transport, session }: S, toolset: string | null, unrecorded?: SessionRecord): void {
    const answers = this.#answers.get(transport);
    if (!answers) throw new Error(`session ${id} was connected without SharedSessions.decorate`);
    this.#held.set(id, { session, answers, toolset, touchedAtMs: Date.now(), following: Promise.resolve(), unrecorded });
  }

  // The record of a session opened while the store was away, written now if it is back (with the
  // set equipped meanwhile); at most one try at a time. Resolves true once it is recorded.
  #recordLate(id: string, held: Held): Promise<boolean> {
    const record = held.unrecorded;
    if (!record) return Promise.resolve(true);
    held.recording ??= this.#options.store.sessions
      .put(id, { ...record, toolset: held.toolset, activeAt: new Date().toISOString() }, { ifRevision: null })
      .then(
        () => {
          held.unrecorded = undefined;
          this.#log.info({ session: id }, 'session recorded in the store');
          return true;
        },
        (error: unknown) => {
          this.#log.debug({ session: id, err: errorMessage(error) }, 'session still not recorded in the store');
          return false;
        },
      )
      .finally(() => (held.recording = undefined));
    return held.recording;
  }

  // An answer of the client that this replica's copy does not wait on: into the record, for the copy that does.
  async #relayAnswer(id: string, answer: ClientAnswer): Promise<void> {
    try {
      await this.#options.store.sessions.update(
        id,
        (record) => record && { ...record, answers: [...(record.answers ?? []).slice(1 - MAX_ANSWERS_KEPT), answer] },
      );
    } catch (error) {
      this.#log.warn({ session: id, err: errorMessage(error) }, "could not pass on the client's answer to the replica waiting on it");
    }
  }

  // Answers in the record that the copy here waits on: delivered, and taken out of the record.
  async #takeAnswers(id: string, held: Held, answers: ReadonlyArray<{ id: string | number }>): Promise<void> {
    const taken = new Set(answers.filter((answer) => held.answers.deliver(answer)).map((answer) => answer.id));
    if (!taken.size) return;
    await this.#options.store.sessions.update(id, (record) => {
      const left = record?.answers?.filter((answer) => !taken.has(answer.id));
      return record && { ...record, answers: left?.length ? left : undefined };
    });
  }

  async #resume(id: string, principal: Principal, makeRoom: () => boolean): Promise<S | undefined | typeof NO_ROOM | typeof FOREIGN> {
    const stored = await this.#options.store.sessions.get(id);
    if (!stored) return undefined;
    if (stored.value.principal !== principal.id) return FOREIGN;
    if (!makeRoom()) return NO_ROOM;
    const record = stored.value;
    // The SDK (2.4) has no public way to start a server transport already initialized (its
    // `_initialized` flag is private; typescript-sdk issues #1658, #1882). So the session is
    // re-created through public calls only: a Web-standard transport whose one session id is the
    // stored one, served over node:http by the SDK's own toNodeHandler, and the client's initialize
    // (as recorded) replayed into it before any request of the client's is. The Server answers
    // that initialize as it did the first time (same capabilities, version and client info); the
    // answer is read here and dropped.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessionclosed: () => this.ended(id),
      ...resumableStreams(),
    });
    const serve = this.#options.node.toNodeHandler({ fetch: (request, options) => transport.handleRequest(request, options) });
    const state = await this.#options.attach(id, transport, serve, principal, {
      ...this.connectOptions(id),
      resumedToolset: record.toolset,
    });
    try {
      await replayInitialize(transport, id, record);
    } catch (error) {
      await transport.close();
      throw error;
    }
    this.#hold(id, state, record.toolset);
    this.#log.info({ session: id }, 'session resumed from the store');
    return state;
  }

  // An equip or unequip of session `id` here: the record names the new set before it takes effect,
  // so a replica reading it (or hearing of it) serves what the client was told.
  async #recordEquip(id: string, toolset: string | null): Promise<void> {
    const held = this.#held.get(id);
    // Not held yet: the set a session starts (or resumes) with, written with its record.
    if (!held || held.toolset === toolset) return;
    // Set first: this replica hears its own write too, and must not take it for another's equip.
    const previous = held.toolset;
    held.toolset = toolset;
    try {
      await this.#options.store.sessions.update(id, (record) => record && { ...record, toolset });
    } catch (error) {
      held.toolset = previous;
      throw error;
    }
  }

  // Re-read the record of session `id` (after a change heard, or before a request): re-equip what
  // another replica equipped, or end the copy here. Resolves once done.
  #follow(id: string): Promise<void> {
    const held = this.#held.get(id);
    if (!held) return Promise.resolve();
    held.following = held.following.then(async () => {
      // No record yet is no news of another replica's: the copy here is the session.
      if (!(await this.#recordLate(id, held))) return;
      try {
        const stored = await this.#options.store.sessions.get(id);
        if (this.#held.get(id) !== held) return;
        if (!stored) {
          this.#log.info({ session: id }, 'session ended on another replica');
          this.#held.delete(id);
          await held.session.close();
          return;
        }
        if (stored.value.answers) await this.#takeAnswers(id, held, stored.value.answers);
        if (stored.value.toolset === held.toolset) return;
        held.toolset = stored.value.toolset;
        await follow(held.session, held.toolset);
      } catch (error) {
        this.#log.warn({ session: id, err: errorMessage(error) }, 'could not follow a change of the session made on another replica');
      }
    });
    return held.following;
  }

  // Delete the records of sessions unused everywhere for idleMs (one replica at a time does it);
  // every replica holding a copy hears of it and closes its copy.
  async #deleteIdle(): Promise<void> {
    const { store, idleMs } = this.#options;
    try {
      await store.runExclusive('sweep:sessions', async () => {
        // A record's activeAt lags its last use by up to #touchMs.
        const before = Date.now() - idleMs - this.#touchMs;
        for (const { key, value } of await store.sessions.list()) {
          if (Date.parse(value.activeAt ?? value.createdAt) >= before) continue;
          this.#log.info({ session: key }, 'session expired after idling');
          await store.sessions.delete(key);
        }
      });
    } catch (error) {
      this.#log.warn({ err: errorMessage(error) }, 'could not delete idle sessions from the store');
    }
  }
}

// Replays the recorded initialize (and the client's initialized notice) on a fresh transport.
async function replayInitialize(transport: WebStandardStreamableHTTPServerTransport, id: string, record: SessionRecord): Promise<void> {
  const initialize = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: record.protocolVersion,
      capabilities: record.clientCapabilities,
      clientInfo: record.clientInfo ?? { name: 'unknown', version: '0' },
    },
  };
  const answer = await transport.handleRequest(
    new Request(REPLAY_URL, { method: 'POST', headers: REPLAY_HEADERS, body: JSON.stringify(initialize) }),
  );
  // The SSE stream ends once the answer is written.
  const text = await answer.text();
  if (answer.status !== 200 || !answersWithResult(answer, text, initialize.id)) {
    throw new LoadoutError(
      'SESSION_LOST',
      `Could not resume session ${id} from the store: its initialize was answered ${answer.status} ${text}`,
    );
  }
  await transport.handleRequest(
    new Request(REPLAY_URL, {
      method: 'POST',
      headers: { ...REPLAY_HEADERS, 'Mcp-Session-Id': id },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    }),
  );
}

/**
 * Whether a replayed request was answered with a result: the answer's messages (an SSE stream's
 * data lines, or one JSON body) are read as JSON-RPC, never searched for a word.
 */
export function answersWithResult(answer: Response, text: string, id: number): boolean {
  const bodies = answer.headers.get('content-type')?.includes('text/event-stream')
    ? text.split('\n').flatMap((line) => (line.startsWith('data:') ? [line.slice('data:'.length)] : []))
    : [text];
  return bodies.some((body) => {
    try {
      const message: unknown = JSON.parse(body);
      return isJSONRPCResultResponse(message) && message.id === id;
    } catch {
      return false;
    }
  });
}

// Re-equip a copy after an equip made through another replica, announced as any equip is: with a
// store the session never waits for the client's re-read (it may land on any replica), so the GET
// stream, if it is on this replica, hears the change and nothing is held.
async function follow(session: GatewaySession, toolset: string | null): Promise<void> {
  await (toolset ? session.equip(toolset, { remember: false }) : session.unequip({ remember: false }));
}

// Whether a POST body holds a request that depends on the equipped set, other than a call of an equipped tool.
function needsCurrentSet(body: unknown, session: GatewaySession): boolean {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    if (typeof message !== 'object' || message === null || !('method' in message) || !('id' in message)) return false;
    const { method, params } = message as { method: unknown; params?: { name?: unknown } };
    return !(method === 'tools/call' && typeof params?.name === 'string' && session.snapshot.routes.has(params.name));
  });
}
