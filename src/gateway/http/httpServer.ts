// Serves the gateway over streamable HTTP: `/mcp`, `/mcp/toolsets/NAME` and `/healthz` (healthz.ts). 2025-era
// clients get one GatewaySession per MCP session on /mcp (POST, the GET notification stream,
// DELETE), expired when left idle. Without a store a session lives in one process, so several
// processes behind one address need sticky routing for them; with one, any replica serves any
// session (sharedSessions.ts). A 2026-07-28 request needs no session (modernHttp.ts), so any
// process on the same data dir can answer it. Guards every request (Host, Origin, token, body
// size) before either era's handling sees it, and drains at SIGTERM (httpDrain.ts).
import { isInitializeRequest } from '@modelcontextprotocol/server';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoadoutError, errorMessage, isLoadoutError, type Logger } from '../../shared/index.js';
import { ToolsetNameSchema, type AuthSettings } from '../../config/index.js';
import type { Principal } from '../../identity/index.js';
import type { ServerWire } from '../../telemetry/index.js';
import { isStoreAway, type TeamStore } from '../../store/index.js';
import type { Gateway } from '../createGateway.js';
import type { GatewaySession } from '../session.js';
import { assertSafeBind, createRequestGuard } from './httpGuard.js';
import { httpIdentity, isCredentialRefusal, refusalAuditEvent, type HttpIdentity } from './httpIdentity.js';
import { modernEndpoints } from './modernHttp.js';
import { answeredOverLimit } from './overLimit.js';
import { healthAnswer } from './healthz.js';
import { listen, urlOf } from './listening.js';
import { listenForMetrics, type MetricsListener } from './metricsListener.js';
import { authorizationCallback } from './authorizationCallback.js';
import { makeRoom } from './sessionRoom.js';
import { resumableStreams } from './sessionEvents.js';
import { FOREIGN, NO_ROOM, SharedSessions, type ServeRequest, type SessionTransport, type SharedConnectOptions } from './sharedSessions.js';
import { HttpDrain } from './httpDrain.js';
import { NO_BODY, readJsonBody, refuseMalformedRequests, sendDraining, sendError, sendJson, sendStoreAway } from './httpReplies.js';

/** Options of serveHttp. */
export interface HttpServeOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Bearer tokens accepted (any one); each is a principal with its own equipped set in the 2026-07-28 era. */
  tokens?: readonly string[];
  /** Check OAuth access tokens from this issuer instead (loadout as a resource server); not with `tokens`. */
  auth?: AuthSettings;
  /** Origins allowed besides the server's own. */
  allowedOrigins?: readonly string[];
  /** Host names accepted besides the bound address: a proxy's public name (`NAME:PORT`: only on that port). */
  allowedHosts?: readonly string[];
  maxBodyBytes: number;
  /** Sessions with no request open for this long are closed; 0 keeps them forever. */
  sessionIdleMs: number;
  /** Most sessions at once; a new one beyond it ends an idle one, shared fairly (sessionRoom.ts; each holds about 38 KiB of heap: bench row 7c). */
  maxSessions: number;
  /**
   * With `--metrics`: GET /metrics (Prometheus text) on a listener of its own at `host:port`
   * (metricsListener.ts), never on the MCP port.
   */
  metrics?: { host: string; port: number; serve: (req: IncomingMessage, res: ServerResponse) => void };
  /** Most sessions of one principal at once; a new one beyond it ends that principal's idle longest. Default: maxSessions. */
  maxSessionsPerPrincipal?: number;
  /** A team store: 2025 sessions are recorded there, and any replica on it serves any of them. */
  store?: TeamStore;
  logger: Logger;
}

/** A listening HTTP gateway. */
export interface HttpGateway {
  /** The MCP endpoint, e.g. `http://127.0.0.1:7077/mcp`. */
  readonly url: string;
  /** Where the metrics are scraped, with `metrics`. */
  readonly metricsUrl: string | undefined;
  /** Live MCP sessions. */
  readonly sessionCount: number;
  /**
   * Drain (httpDrain.ts): answer /healthz `draining` and new requests 503, end the GET and listen
   * streams, wait up to `limitMs` for the POSTs under way, then `cutOff` the rest. True when all ended by themselves.
   */
  drain(limitMs: number, cutOff: () => void): Promise<boolean>;
  /** Stop a drain's wait: cut off what is under way now. */
  cutShort(): void;
  /** Close every session and stop listening. Runs once. */
  close(): Promise<void>;
}

interface HttpSession {
  readonly transport: SessionTransport;
  /** Serves one request of the session on its transport. */
  readonly serve: ServeRequest;
  readonly session: GatewaySession;
  /** Requests open, the GET notification stream included (it keeps a session from expiring). */
  openRequests: number;
  /** POSTs open: a request or call under way, which ending the session would cut off. */
  openPosts: number;
  /** GET notification streams open: without one, the session's notifications reach no one. */
  openGets: number;
  lastActiveMs: number;
  /** Who started it: only they may use it. */
  readonly principal: Principal;
}

const MCP_PATH = '/mcp';
/** Followed by a toolset's name: the endpoint whose tool list is that toolset, always. */
const TOOLSETS_PATH = '/mcp/toolsets/';
const HEALTH_PATH = '/healthz';
const SESSION_NOT_FOUND = 'Session not found (it ended or expired); send initialize to start a new one';
const HTTP_WIRE = { transport: 'tcp', protocol: 'http' } as const;

/** Listen on `options.host:port` and serve `gateway` to any number of HTTP clients. */
export async function serveHttp(gateway: Gateway, options: HttpServeOptions): Promise<HttpGateway> {
  const tokens = options.tokens ?? [];
  if (options.auth && tokens.length > 0) {
    throw new LoadoutError(
      'INVALID_ARGUMENT',
      'Give either --token or an authorization server (auth: in servers.yaml, or --auth-issuer), not both',
    );
  }
  // An authorization server stands in for the token: every request needs one of its access tokens.
  assertSafeBind(options.host, tokens[0] ?? options.auth?.issuer);
  // Loaded here, not at module load: it brings an HTTP framework that stdio `serve` never needs,
  // and node:http costs a stdio gateway's start ~1 ms for nothing.
  const nodeModule = await import('@modelcontextprotocol/node');
  const { NodeStreamableHTTPServerTransport } = nodeModule;
  const { createServer } = await import('node:http');
  const logger = options.logger.child({ mod: 'http' });
  const sessions = new Map<string, HttpSession>();
  const drain = new HttpDrain();
  let guard: ReturnType<typeof createRequestGuard> | undefined;
  let identity: HttpIdentity | undefined;
  const modern = modernEndpoints(gateway, nodeModule, { maxBodyBytes: options.maxBodyBytes, logger });
  const callback = authorizationCallback(gateway.context.pool.authorizations);

  // Connect a GatewaySession to session `id`'s transport; it is served once it is in `sessions`.
  const attach = async (
    id: string,
    transport: SessionTransport,
    serve: ServeRequest,
    principal: Principal,
    shared: SharedConnectOptions = {},
    client?: ServerWire['client'],
  ): Promise<HttpSession> => {
    let state: HttpSession | undefined;
    // Set before connect: the SDK chains it, so a DELETE, an expiry or a gateway close all land here.
    transport.onclose = () => {
      if (!state) return;
      sharing?.dropped(id, state.session);
      if (sessions.get(id) !== state) return;
      sessions.delete(id);
      logger.info({ session: id }, 'session ended');
    };
    // A tools list_changed reaches the client only on its GET stream: an equip need not wait for a
    // re-read otherwise. With a store it never waits: the re-read may go to any replica, unseen here.
    const session = await gateway.connect(
      gateway.telemetry.serverTransport(sharing?.decorate(id, transport) ?? transport, {
        ...HTTP_WIRE,
        client,
        hidden: gateway.hiddenFrom(principal),
      }),
      {
        principal,
        hearsToolChanges: () => !sharing && (state?.openGets ?? 0) > 0,
        ...shared,
      },
    );
    state = { transport, serve, session, openRequests: 0, openPosts: 0, openGets: 0, lastActiveMs: Date.now(), principal };
    return state;
  };
  const sharing = options.store
    ? new SharedSessions({ store: options.store, node: nodeModule, attach, idleMs: options.sessionIdleMs, logger })
    : undefined;

  const startSession = async (req: IncomingMessage, res: ServerResponse, body: unknown, principal: Principal): Promise<void> => {
    const id = randomUUID();
    let state: HttpSession | undefined;
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: () => {
        sessions.set(id, state!);
        logger.info({ session: id, sessions: sessions.size }, 'session started');
      },
      onsessionclosed: sharing && (() => sharing.ended(id)),
      ...resumableStreams(),
    });
    try {
      state = await attach(id, transport, (...request) => transport.handleRequest(...request), principal, sharing?.connectOptions(id), {
        // client.address: the connection that opened the session.
        address: req.socket.remoteAddress,
        port: req.socket.remotePort,
      });
      // Recorded before the client learns the id: its next request may reach another replica.
      if (sharing && isInitializeRequest(body)) await sharing.record(id, principal, body.params, state);
      await transport.handleRequest(req, res, body);
    } finally {
      // A failed connect, or an initialize the SDK rejected, leaves a session nobody can address.
      if (!transport.sessionId) {
        await transport.close();
        await sharing?.abandoned(id);
      }
    }
  };

  // Room for one more session of `principal` here, fairly shared (with a store, its copy here).
  const limits = { maxSessions: options.maxSessions, maxPerPrincipal: options.maxSessionsPerPrincipal ?? options.maxSessions };
  const hasRoom = (principal: Principal): boolean => makeRoom(sessions, principal, limits, logger);
  const sendNoRoom = (res: ServerResponse): void =>
    sendError(
      res,
      503,
      'Every session this one may replace (--max-sessions, --max-sessions-per-principal) has a call under way; try again later',
    );

  // A session another replica started (or this one, before it dropped its copy), re-created here from the store.
  const resumeSession = async (id: string, principal: Principal): Promise<HttpSession | undefined | typeof NO_ROOM | typeof FOREIGN> => {
    if (!sharing) return undefined;
    const state = await sharing.resume(id, principal, () => hasRoom(principal));
    if (state && state !== NO_ROOM && state !== FOREIGN && !sessions.has(id)) sessions.set(id, state);
    return state;
  };

  const handleMcp = async (req: IncomingMessage, res: ServerResponse, principal: Principal): Promise<void> => {
    const sessionId = req.headers['mcp-session-id'];
    if (Array.isArray(sessionId)) return sendError(res, 400, 'Only one Mcp-Session-Id header is allowed');
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      res.setHeader('Allow', 'GET, POST, DELETE');
      return sendError(res, 405, `Method ${req.method} is not allowed on ${MCP_PATH}`);
    }
    const body = req.method === 'POST' ? await readJsonBody(req, res, options.maxBodyBytes) : undefined;
    if (body === NO_BODY) return;
    // The SDK answers a body with a malformed message 400 "Parse error", naming nothing and giving no request its id back.
    const refused = refuseMalformedRequests(body);
    if (refused) return sendJson(res, 400, refused);
    if (drain.refuses(req.method, body)) return sendDraining(res);
    if (req.method === 'POST') drain.track(res, body);
    if (sessionId === undefined) {
      // A 2026-07-28 request is served on its own, whatever came before it.
      if (req.method === 'POST' && (await modern.isModern(req, body))) return modern.servePrincipal(req, res, body, principal);
      if (req.method === 'POST' && isInitializeRequest(body)) {
        return hasRoom(principal) ? startSession(req, res, body, principal) : sendNoRoom(res);
      }
      return sendError(res, 400, 'Mcp-Session-Id header is required (send initialize first to start a session)');
    }
    const held = sessions.get(sessionId);
    const session = held ?? (await resumeSession(sessionId, principal));
    if (session === NO_ROOM) return sendNoRoom(res);
    if (!session) return sendError(res, 404, SESSION_NOT_FOUND);
    if (session === FOREIGN || session.principal.id !== principal.id) {
      // With a store, another caller's session is answered as unknown: it exists on every replica alike.
      const refusal = sharing
        ? { status: 404, message: SESSION_NOT_FOUND }
        : { status: 403, message: 'This session belongs to another caller' };
      gateway.context.audit.record(refusalAuditEvent(req, MCP_PATH, refusal, Date.now(), { principal, outcome: 'denied-session' }));
      return sendError(res, refusal.status, refusal.message);
    }
    // The groups this token names apply at once, to this session and every other of its principal (policyViews.ts).
    gateway.contextOf(principal);
    // A session just resumed was read from the store for this very request.
    if (held) await sharing?.beforeRequest(sessionId, body);
    const posted = req.method === 'POST';
    const stream = req.method === 'GET';
    session.openRequests++;
    if (posted) session.openPosts++;
    if (stream) session.openGets++;
    res.once('close', () => {
      session.openRequests--;
      if (posted) session.openPosts--;
      if (stream) session.openGets--;
      session.lastActiveMs = Date.now();
    });
    if (posted && (await answeredOverLimit(body, res, (params, id) => session.session.limitRefusal(params, id)))) return;
    await session.serve(req, res, body);
  };

  // A toolset endpoint serves 2026-07-28 requests only: a 2025 session would be one more per-process state.
  const handleToolset = async (req: IncomingMessage, res: ServerResponse, name: string, principal: Principal): Promise<void> => {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      return sendError(res, 405, `Method ${req.method} is not allowed on ${TOOLSETS_PATH}${name}`);
    }
    const body = await readJsonBody(req, res, options.maxBodyBytes);
    if (body === NO_BODY) return;
    const refused = refuseMalformedRequests(body);
    if (refused) return sendJson(res, 400, refused);
    if (drain.refuses(req.method, body)) return sendDraining(res);
    drain.track(res, body);
    if (!(await modern.isModern(req, body))) {
      return sendError(res, 400, `${TOOLSETS_PATH}${name} serves MCP 2026-07-28 requests only; 2025 clients connect to ${MCP_PATH}`);
    }
    try {
      await modern.serveToolset(req, res, body, name, principal);
    } catch (error) {
      if (!isLoadoutError(error) || error.code !== 'TOOLSET_NOT_FOUND' || res.headersSent) throw error;
      sendError(res, 404, error.message);
    }
  };

  const server = createServer((req, res) => {
    drain.closesWhenDraining(res);
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    // Until the port is known the guard cannot check Host: refuse rather than let anything through.
    const refusal =
      guard && identity
        ? guard(req.headers, {
            needsToken: path !== HEALTH_PATH && !callback.at(path) && !identity.checksTokens,
            checksHost: path !== HEALTH_PATH,
          })
        : { status: 503 as const, message: 'loadout is starting' };
    if (refusal) {
      if (refusal.status === 401) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        gateway.context.audit.record(refusalAuditEvent(req, path, refusal, Date.now()));
      }
      return sendError(res, refusal.status, refusal.message);
    }
    const metadata = identity!.metadataAt(path);
    if (metadata) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, `Use GET ${path}`);
      return sendJson(res, 200, metadata);
    }
    if (callback.at(path)) return callback.serve(req, res);
    if (path === HEALTH_PATH) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'Use GET /healthz');
      return sendJson(res, ...healthAnswer(options.store, drain.draining));
    }
    const toolset = path.startsWith(TOOLSETS_PATH) ? ToolsetNameSchema.safeParse(path.slice(TOOLSETS_PATH.length)) : undefined;
    if (path !== MCP_PATH && !toolset?.success) return sendError(res, 404, `Nothing at ${path}; the MCP endpoint is ${MCP_PATH}`);
    const serve = async (): Promise<void> => {
      const startedAt = Date.now();
      const principal = await identity!.principalOf(req.headers);
      if (isCredentialRefusal(principal)) {
        gateway.context.audit.record(refusalAuditEvent(req, path, principal, startedAt));
        for (const [name, value] of Object.entries(principal.headers)) res.setHeader(name, value);
        return sendError(res, principal.status, principal.message);
      }
      return toolset?.success ? handleToolset(req, res, toolset.data, principal) : handleMcp(req, res, principal);
    };
    serve().catch((error: unknown) => {
      logger.error({ err: errorMessage(error) }, 'HTTP request failed');
      // A LoadoutError (e.g. a --equip toolset that does not exist) says what to fix.
      // The store away (and its local copy not knowing what was asked) is a 503 with Retry-After:
      // another replica (one holding the session), or this one once the store is back, answers it.
      const message = isLoadoutError(error) ? error.message : 'Internal error';
      if (res.headersSent) res.end();
      else if (isStoreAway(error)) sendStoreAway(res, message);
      else sendError(res, 500, message);
    });
  });

  const port = await listen(server, options.host, options.port);
  let metrics: MetricsListener | undefined;
  try {
    metrics = options.metrics && (await listenForMetrics({ ...options.metrics, logger }));
  } catch (error) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  }
  // No client may come for a while: load the catalog and discover uncached servers now, as stdio
  // does right after its client's first tools/list.
  void gateway.context.ready();
  const url = urlOf(options.host, port, MCP_PATH);
  identity = httpIdentity(options.auth, url, tokens);
  callback.redirectTo(options.auth?.audience ?? url);
  guard = createRequestGuard({
    host: options.host,
    port,
    tokens,
    allowedOrigins: options.allowedOrigins,
    allowedHosts: options.allowedHosts,
  });
  const expiry =
    options.sessionIdleMs > 0 ? startIdleExpiry(sessions, options.sessionIdleMs, logger, (id) => sharing?.active(id)) : undefined;
  let closed: Promise<void> | undefined;

  return {
    url,
    metricsUrl: metrics?.url,
    get sessionCount() {
      return sessions.size;
    },
    drain(limitMs, cutOff) {
      const endStreams = (): void => {
        for (const session of sessions.values()) session.transport.closeStandaloneSSEStream();
        modern.endListens();
      };
      return drain.run(limitMs, endStreams, cutOff);
    },
    cutShort() {
      drain.cutShort();
    },
    close() {
      closed ??= (async () => {
        if (expiry) clearInterval(expiry);
        sharing?.close();
        await Promise.allSettled([modern.close(), ...[...sessions.values()].map((session) => session.transport.close())]);
        // Open GET streams would keep server.close() waiting forever.
        server.closeAllConnections();
        await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), metrics?.close()]);
      })();
      return closed;
    },
  };
}

// `inUse`: told of each session with a request open (its GET stream, say) at every check.
function startIdleExpiry(sessions: Map<string, HttpSession>, idleMs: number, logger: Logger, inUse: (id: string) => void): NodeJS.Timeout {
  const timer = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        // An open request (the GET notification stream included) means the client is still there.
        if (session.openRequests > 0) inUse(id);
        if (session.openRequests > 0 || now - session.lastActiveMs < idleMs) continue;
        logger.info({ session: id }, 'session expired after idling');
        void session.transport.close();
      }
    },
    Math.min(idleMs, 60_000),
  );
  timer.unref();
  return timer;
}
