// The 2026-07-28 side of `serve --http`: requests that need no session, each served by the SDK's
// per-request handler (createMcpHandler, legacy: 'reject'). There is one handler per equipped set
// served: each principal's on /mcp, each toolset's on /mcp/toolsets/NAME (principalToolsets.ts),
// with that set's change bus, so a subscriptions/listen stream hears only of its own set. A plain
// call of an equipped tool is answered in front of that handler, as on stdio (modernCallPath.ts):
// the handler builds a web Request, classifies and checks the message with zod and writes the
// answer, about 0.4 ms of CPU per call, for a call the session's intake forwards as it is anyway.
import { createMcpHandler, isInitializeRequest, isLegacyRequest } from '@modelcontextprotocol/server';
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import type { NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { ProtocolErrorCode, type JSONRPCMessage, type JSONRPCRequest, type Transport } from '@modelcontextprotocol/server';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HEADER_MISMATCH, MODERN_REVISION, carriesEnvelope, paramHeaderMismatch, type Logger } from '../../shared/index.js';
import type { Route } from '../../registry/index.js';
import type { ServedRequest } from '../../telemetry/index.js';
import { ALL_TOOLSET } from '../../toolsets/index.js';
import { isStoreAway } from '../../store/index.js';
import type { Gateway } from '../createGateway.js';
import type { GatewaySession } from '../session.js';
import type { Principal } from '../../identity/index.js';
import { scopeKey, type RequestScope } from '../principalToolsets.js';
import { isPlainModernCall } from '../calls/index.js';
import { answeredOverLimit, overLimitHeaders } from './overLimit.js';

/** Options of modernEndpoints. */
interface ModernOptions {
  maxBodyBytes: number;
  logger: Logger;
}

/** The modern handlers of one HTTP gateway. */
export interface ModernEndpoints {
  /** Whether a POST with no session id is a 2026-07-28 request (the SDK's classification). */
  isModern(req: IncomingMessage, body: unknown): Promise<boolean>;
  /** Serve a modern request on /mcp, with its principal's set (its credentials checked). */
  servePrincipal(req: IncomingMessage, res: ServerResponse, body: unknown, principal: Principal): Promise<void>;
  /** Serve a modern request on /mcp/toolsets/`toolset` (TOOLSET_NOT_FOUND for an unknown toolset, before anything is served). */
  serveToolset(req: IncomingMessage, res: ServerResponse, body: unknown, toolset: string, principal: Principal): Promise<void>;
  /** End every subscriptions/listen stream (each gets its complete result, as at close), and nothing else. */
  endListens(): void;
  /** End every request under way. */
  close(): Promise<void>;
}

/** The modern endpoints of `gateway`; `nodeModule` is @modelcontextprotocol/node, loaded by the caller. */
export function modernEndpoints(
  gateway: Gateway,
  nodeModule: typeof import('@modelcontextprotocol/node'),
  options: ModernOptions,
): ModernEndpoints {
  const { toNodeHandler, toWebRequest } = nodeModule;
  // Listen streams have handlers of their own (`listens`), so a drain can end them alone: closing a
  // handler ends its listen streams and every exchange under way on it.
  const handlers = new Map<string, { handler: McpHttpHandler; serve: NodeMcpRequestHandler }>();
  const listens = new Map<string, { handler: McpHttpHandler; serve: NodeMcpRequestHandler }>();
  // The session of the request being served, handed to the handler's factory: one per request.
  const requestSessions = new AsyncLocalStorage<() => Promise<GatewaySession>>();
  const handlerOf = (scope: RequestScope, listen: boolean): NodeMcpRequestHandler => {
    const key = scopeKey(scope);
    const served = listen ? listens : handlers;
    let modern = served.get(key);
    if (!modern) {
      const handler = createMcpHandler(
        async () => gateway.telemetry.reportAnswers((await (requestSessions.getStore()?.() ?? gateway.requestSession(scope))).server),
        {
          legacy: 'reject',
          bus: gateway.requestBus(scope),
          maxRequestBodySize: options.maxBodyBytes,
          onerror: (error) => options.logger.debug({ err: error.message }, 'modern request refused or failed'),
        },
      );
      modern = { handler, serve: toNodeHandler(handler, { maxRequestBodySize: options.maxBodyBytes }) };
      served.set(key, modern);
    }
    return modern.serve;
  };

  // A listen stream that names resources holds them (subscribed downstream, their updates put on
  // the set's bus) from before the SDK acknowledges it, so an update right after the ack is not
  // lost, until its response closes.
  const serve = (scope: RequestScope, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    if (!gateway.telemetry.enabled) return serveInScope(scope, req, res, body);
    // One POST, one request: its span lasts until its response is written.
    const served = gateway.telemetry.serveRequest(body, req, gateway.hiddenFrom(scope.principal));
    res.once('close', () => served.end(res.statusCode));
    return served.run(() => serveInScope(scope, req, res, body, served));
  };
  const serveInScope = async (
    scope: RequestScope,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    served?: ServedRequest,
  ): Promise<void> => {
    const request = body as { method?: unknown; params?: unknown } | undefined;
    if (request?.method === 'subscriptions/listen') {
      const listened = gateway.listenedResources(scope);
      const stream = {};
      res.once('close', () => listened.close(stream));
      await listened.open(stream, request.params);
    }
    let session: Promise<GatewaySession> | undefined;
    const setNeeded = !SET_FREE_METHODS.has(request?.method);
    const sessionOf = (): Promise<GatewaySession> => (session ??= gateway.requestSession(scope, calledToolOf(request), setNeeded));
    // A set neither the store nor this replica's copy of it can tell (the store away): the request
    // is answered with why, never served as if nothing were equipped.
    if (setNeeded && isRequest(body)) {
      const unknown = await sessionOf().then(
        () => undefined,
        (error: unknown) => {
          if (!isStoreAway(error)) throw error;
          return error as Error;
        },
      );
      if (unknown) return void res.writeHead(200, { 'content-type': 'application/json' }).end(storeAwayAnswer(body, unknown));
    }
    const mismatch =
      isRequest(body) && body.method === 'tools/call' ? paramMismatchOf(req, body, (await sessionOf()).snapshot.routes) : undefined;
    if (mismatch) {
      served?.answered(mismatch);
      return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(mismatch));
    }
    if (isDirectCall(req, body) && (await answerDirectly(sessionOf, body, res, served))) return;
    // A call the handler would route (a meta-tool's, one not answered directly) is refused here for
    // a limit, as HTTP's 429; with no limit set there is nothing to ask.
    const answered = served && ((answer: JSONRPCMessage) => served.answered(answer));
    if (
      gateway.context.limits.enabled &&
      (await answeredOverLimit(body, res, async (params, id) => (await sessionOf()).limitRefusal(params, id), answered))
    )
      return;
    return requestSessions.run(sessionOf, () => handlerOf(scope, request?.method === 'subscriptions/listen')(req, res, body));
  };

  // Answer a plain call of an equipped tool with its result as JSON, as the handler would; false
  // when the session does not answer it by forwarding (a meta-tool, a tool not equipped).
  const answerDirectly = async (
    sessionOf: () => Promise<GatewaySession>,
    request: JSONRPCRequest,
    res: ServerResponse,
    served?: ServedRequest,
  ): Promise<boolean> => {
    const calls = (await sessionOf()).directCalls;
    const response: Transport = {
      start: () => Promise.resolve(),
      close: () => Promise.resolve(),
      send: (message: JSONRPCMessage) => {
        served?.answered(message);
        if (!res.headersSent) res.writeHead(statusOf(message), { 'content-type': 'application/json', ...overLimitHeaders(message) });
        res.end(JSON.stringify(message));
        return Promise.resolve();
      },
    };
    if (!calls.take(request, response)) return false;
    // A 2026-07-28 client cancels a request by closing its response.
    res.once('close', () => {
      if (!res.writableFinished) calls.cancel(request.id, 'the client closed the request');
    });
    return true;
  };

  return {
    async isModern(req, body) {
      if (isInitializeRequest(body)) return false;
      // One carrying the envelope is modern by definition; the full classification (a web Request
      // built from the body) is left for the rest.
      return (
        carriesEnvelope((body as { params?: unknown } | undefined)?.params) || !(await isLegacyRequest(await toWebRequest(req, body), body))
      );
    },
    servePrincipal(req, res, body, principal) {
      return serve({ kind: 'principal', principal }, req, res, body);
    },
    async serveToolset(req, res, body, toolset, principal) {
      const scope: RequestScope = { kind: 'toolset', toolset, principal };
      // Checked once: a toolset deleted later is served empty, and saved again, served again. Asked
      // of the principal's own toolsets: a 404 lists only the names it may see.
      if (!handlers.has(scopeKey(scope)) && toolset !== ALL_TOOLSET) await gateway.contextOf(principal).toolsets.get(toolset);
      return serve(scope, req, res, body);
    },
    endListens() {
      for (const modern of listens.values()) void modern.handler.close();
      listens.clear();
    },
    async close() {
      await Promise.allSettled([...handlers.values(), ...listens.values()].map((modern) => modern.handler.close()));
    },
  };
}

// Requests answered without the principal's set (it is read for the others first).
const SET_FREE_METHODS: ReadonlySet<unknown> = new Set(['server/discover', 'ping']);

function isRequest(body: unknown): body is JSONRPCRequest {
  return typeof body === 'object' && body !== null && 'method' in body && 'id' in body;
}

// The JSON-RPC error of a request whose set is unknown while the store is away: the store's own line.
function storeAwayAnswer(request: JSONRPCRequest, error: Error): string {
  return JSON.stringify({ jsonrpc: '2.0', id: request.id, error: { code: ProtocolErrorCode.InternalError, message: error.message } });
}

// SEP-2243: the HeaderMismatch error (sent with HTTP 400) of a call of an equipped tool whose
// `Mcp-Param-*` headers disagree with its arguments, as its annotations (the downstream's, listed
// unchanged) declare them; undefined when they agree. The SDK's handler checks only an McpServer's
// own tools, and a plain call is answered in front of it.
function paramMismatchOf(req: IncomingMessage, request: JSONRPCRequest, routes: ReadonlyMap<string, Route>): JSONRPCMessage | undefined {
  const params = request.params as { name?: unknown; arguments?: unknown } | undefined;
  const declared = typeof params?.name === 'string' ? routes.get(params.name)?.paramHeaders : undefined;
  const read = (name: string): string | undefined => {
    const value = req.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const mismatch = declared && paramHeaderMismatch(declared, params?.arguments, read);
  if (!mismatch) return undefined;
  const message = `Bad Request: the request's headers and body disagree: ${mismatch}`;
  return { jsonrpc: '2.0', id: request.id, error: { code: HEADER_MISMATCH, message } };
}

// The tool a tools/call request names.
function calledToolOf(request: { method?: unknown; params?: unknown } | undefined): string | undefined {
  const name = request?.method === 'tools/call' ? (request.params as { name?: unknown } | undefined)?.name : undefined;
  return typeof name === 'string' ? name : undefined;
}

// A plain 2026-07-28 call (isPlainModernCall) whose headers say what its body does, as the
// transport requires, to a client that takes a JSON answer: anything else the handler checks and answers.
function isDirectCall(req: IncomingMessage, body: unknown): body is JSONRPCRequest {
  const request = body as JSONRPCRequest | undefined;
  if (typeof request !== 'object' || request === null || request.method !== 'tools/call') return false;
  const { headers } = req;
  return (
    isPlainModernCall(request, MODERN_REVISION) &&
    headers['mcp-method'] === 'tools/call' &&
    headers['mcp-name'] === request.params?.name &&
    headers['mcp-protocol-version'] === MODERN_REVISION &&
    (headers.accept ?? '').includes('application/json')
  );
}

// The HTTP status of an answer, as the SDK's transport gives it to one sent after the request was
// dispatched: 200, but 400 for a client capability the call needed and the client did not declare;
// and 429 for a call over a rate limit (overLimit.ts).
function statusOf(message: JSONRPCMessage): number {
  if (overLimitHeaders(message)) return 429;
  return 'error' in message && message.error.code === (ProtocolErrorCode.MissingRequiredClientCapability as number) ? 400 : 200;
}
