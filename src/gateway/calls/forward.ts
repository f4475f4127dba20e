// How a client's request travels to a downstream server and back; every forwarded method goes
// through forward(). The client's params go on (its progress token swapped for the request
// layer's), the result comes back unchanged, progress is passed back under the client's own
// token, the downstream's sampling/elicitation requests (and a 2026-07-28 server's roots/list,
// asked within this request) are relayed to this client, a client cancellation cancels the
// downstream request, and a failure is described once, naming the server.
// A 2026-07-28 client cannot be sent requests: the downstream's requests reach it as
// InputRequiredResults instead (inputRounds.ts), and its log messages at each request's own level.
// It sits below sessions and meta-tools: it knows the pool and the client's Server, nothing else.
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SERVER_INFO_META_KEY } from '@modelcontextprotocol/server';
import type {
  Server,
  CallToolResult,
  ClientCapabilities,
  ProgressToken,
  RequestId,
  ServerNotification,
  ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import {
  CLIENT_CAPABILITIES,
  serverCrashOf,
  stderrBlock,
  PrincipalAuthorizationNeeded,
  type DownstreamCaller,
  type Progress,
  type RelayedRequest,
  type ServerPool,
} from '../../downstream/index.js';
import type { Route } from '../../registry/index.js';
import { Cancellation, errorMessage, isLoadoutError, paramHeadersOf } from '../../shared/index.js';
import { RoundTripCall, UnknownRequestStateError } from '../inputRounds.js';
import { modernRequestOfContext, type ModernRequest, type ModernServices } from './modernRequest.js';
import { isPlainObject } from './requestShape.js';
import type { RequestTrace } from '../../telemetry/index.js';
import { errorResult } from '../toolResults.js';

// The JSON-RPC codes a client has always been answered with when a downstream timed out or closed
// (the SDK's own errors for these are local now, with string codes that never cross the wire).
const REQUEST_TIMEOUT = -32001;
const CONNECTION_CLOSED = -32000;

/** The extra argument of an MCP request handler on the client-facing Server. */
export type RequestExtra = ServerContext;

/**
 * The client request a forwarded request answers, whether the SDK Server received it
 * (clientRequestOf) or the session's intake took it straight from the transport (clientIntake.ts).
 */
export interface ClientRequest {
  readonly requestId: RequestId;
  readonly cancellation: Cancellation;
  /** The client's progress token, if it asked for progress. */
  readonly progressToken?: ProgressToken;
  sendNotification(notification: ServerNotification): Promise<void>;
  /** The client session's Server: it asks the client what a downstream asks of it mid-request. */
  readonly server: Server;
  /** What a 2026-07-28 request carries beyond a 2025 one; undefined for a 2025 request. */
  readonly modern: ModernRequest | undefined;
  /** Whose request it is (a principal's id): a `credentials: per-user` server's requests go with their own token. */
  readonly principal?: string;
  /** Its trace context, carried by hand to what it sends downstream (a call the session forwards straight from its intake). */
  readonly trace?: RequestTrace | undefined;
}

/** What is forwarded where: `label` names it in failures (e.g. `files.read_text_file`). */
export interface ForwardTarget {
  server: string;
  method: string;
  params: Record<string, unknown> | undefined;
  label: string;
  /** HTTP headers for a modern server (a call's `Mcp-Param-*`). */
  headers?: Record<string, string>;
}

/**
 * The ClientRequest of a request handled by the SDK Server; without `services` (the 2025-only task
 * methods) it is forwarded as a 2025 request.
 */
export function clientRequestOf(extra: RequestExtra, server: Server, services?: ModernServices): ClientRequest {
  return {
    requestId: extra.mcpReq.id,
    cancellation: Cancellation.fromSignal(extra.mcpReq.signal),
    progressToken: extra.mcpReq._meta?.progressToken,
    sendNotification: extra.mcpReq.notify,
    server,
    modern: services && modernRequestOfContext(extra, services),
    principal: services?.principal?.id,
  };
}

/**
 * Send `target` downstream on behalf of `call` and return the result unchanged. A failure throws
 * a ProtocolError whose message names the server, what was asked and what to do.
 */
export async function forward(pool: ServerPool, target: ForwardTarget, call: ClientRequest): Promise<Record<string, unknown>> {
  if (call.modern) return forwardInRounds(pool, target, call, call.modern);
  const progress = progressTo(call);
  // A modern server may ask this client's roots, so it is told of them; the rest of what it is told
  // stays what loadout relays, as before.
  const roots = call.server.getClientCapabilities()?.roots;
  try {
    const result = await pool.request(target.server, target.method, target.params, {
      cancellation: call.cancellation,
      caller: relayTo(call, target.label),
      clientCapabilities: roots ? { ...CLIENT_CAPABILITIES, roots } : undefined,
      onProgress: progress?.send,
      principal: call.principal,
      trace: call.trace,
      headers: target.headers,
    });
    if (progress) await progress.sent();
    return asLegacyResult(result);
  } catch (error) {
    throw described(pool, target, error);
  }
}

/**
 * A downstream result as a 2025 server would send it: a 2026-07-28 server names itself in every
 * result's `_meta` (the SDK's encodeResult), which a 2025 server never does, so a 2025 client
 * does not get it. (The request layer already took off its `resultType: 'complete'`.)
 */
function asLegacyResult(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta;
  if (!isPlainObject(meta) || !(SERVER_INFO_META_KEY in meta)) return result;
  const { [SERVER_INFO_META_KEY]: _serverInfo, ...ownMeta } = meta;
  const { _meta: _all, ...rest } = result;
  return Object.keys(ownMeta).length ? { ...rest, _meta: ownMeta } : rest;
}

/**
 * The tools/call of `route` with `params` (the server's own tool name in them), and the
 * `Mcp-Param-*` headers its annotations ask for (SEP-2243; the SDK's transport sets Mcp-Name from the body).
 */
export function toolCallTarget(route: Route, params: Record<string, unknown> & { name: string }): ForwardTarget {
  const headers = route.paramHeaders && paramHeadersOf(route.paramHeaders, params.arguments);
  return { server: route.server, method: 'tools/call', params, label: route.id, ...(headers && { headers }) };
}

/** Forward a tools/call of `route`; a failure becomes an isError result the agent can act on. */
export async function forwardToolCall(
  pool: ServerPool,
  route: Route,
  args: Record<string, unknown> | undefined,
  call: ClientRequest,
): Promise<CallToolResult> {
  const params = args === undefined ? { name: route.tool } : { name: route.tool, arguments: args };
  try {
    return (await forward(pool, toolCallTarget(route, params), call)) as CallToolResult;
  } catch (error) {
    if (isProtocolRefusal(error) || error instanceof PrincipalAuthorizationNeeded) throw error;
    return errorResult(ProtocolError.isInstance(error) ? withoutCode(error.message) : errorMessage(error));
  }
}

/**
 * Whether a failed call is the protocol's business, a JSON-RPC error the client must see as such
 * (whichever tool it called, call-tool too), not the tool's failure: a retry loadout cannot match,
 * a call its client lacks a capability for, or one a drain cut off (the gateway stopped, not the tool).
 */
export function isProtocolRefusal(error: unknown): boolean {
  if (error instanceof UnknownRequestStateError) return true;
  if (!ProtocolError.isInstance(error)) return false;
  return error.code === (ProtocolErrorCode.MissingRequiredClientCapability as number) || isDrainCutOff(error);
}

// A call cut off by a drain (describeFailure): loadout stopped, not the tool, as a refusal while draining is.
function isDrainCutOff(error: ProtocolError): boolean {
  return typeof error.data === 'object' && error.data !== null && (error.data as { code?: unknown }).code === 'DRAIN_LIMIT';
}

// The methods whose 2026-07-28 results may be an InputRequiredResult.
const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/**
 * Forward a 2026-07-28 request, or continue the call it retries. It answers with the downstream's
 * result, or with an InputRequiredResult when the downstream asks for input first; its progress,
 * log messages and cancellation are this request's until it is answered.
 */
async function forwardInRounds(
  pool: ServerPool,
  target: ForwardTarget,
  call: ClientRequest,
  modern: ModernRequest,
): Promise<Record<string, unknown>> {
  const { inputRounds, hub } = modern.services;
  const roundTrip =
    modern.requestState === undefined ? startRoundTrip(pool, target, call, modern) : inputRounds.take(modern.requestState, target.label);
  roundTrip.answer(modern.inputResponses);
  const progress = progressTo(call);
  roundTrip.onProgress = progress?.send;
  const { logLevel } = modern;
  const unwatchLogs =
    logLevel &&
    hub.watchRequestLogs(target.server, {
      owner: call.server,
      level: logLevel,
      // A log message that cannot be sent (the client went away) is not worth more.
      send: (notification) => void call.sendNotification(notification).catch(() => undefined),
    });
  const stopListening = call.cancellation.onCancel((reason) => roundTrip.drop(errorMessage(reason)));
  try {
    if (call.cancellation.cancelled) roundTrip.drop(errorMessage(call.cancellation.reason));
    if ((await roundTrip.next()) === 'asked') {
      const waitMs = (pool.config(target.server)?.timeout_seconds ?? 60) * 1000;
      return { resultType: 'input_required', inputRequests: roundTrip.inputRequests(), requestState: inputRounds.park(roundTrip, waitMs) };
    }
    const result = await roundTrip.outcome;
    if (progress) await progress.sent();
    return result;
  } finally {
    roundTrip.onProgress = undefined;
    unwatchLogs?.();
    stopListening();
  }
}

/**
 * Where the downstream's progress goes when the client asked for it (undefined when it did not):
 * to the client under its own token (the downstream used the request layer's), in order; `sent`
 * settles once all sent so far have gone, which the result waits for, since a client drops
 * progress for a finished request.
 */
function progressTo(call: ClientRequest): { send: (progress: Progress) => void; sent: () => Promise<void> } | undefined {
  const { progressToken } = call;
  if (progressToken === undefined) return undefined;
  let sent = Promise.resolve();
  return {
    send: (progress) => {
      const notification = { method: 'notifications/progress' as const, params: { ...progress, progressToken } };
      sent = sent.then(() => call.sendNotification(notification)).catch(() => undefined);
    },
    sent: () => sent,
  };
}

// Send `target` downstream for the round trip's first request.
function startRoundTrip(pool: ServerPool, target: ForwardTarget, call: ClientRequest, modern: ModernRequest): RoundTripCall {
  const roundTrip = new RoundTripCall(target.label);
  const refusal = (request: RelayedRequest): ProtocolError | undefined => {
    if (!INPUT_REQUIRED_METHODS.has(target.method))
      return relayRefusal(
        request,
        target.label,
        'a 2026-07-28 client can be asked for input only during tools/call, prompts/get and resources/read',
      );
    const missing = missingCapability(modern.capabilities, request);
    return missing ? relayRefusal(request, target.label, `the client that called it did not declare ${missing}`) : undefined;
  };
  const caller: DownstreamCaller = {
    owner: call.server,
    async relay(request, signal) {
      const refused = refusal(request);
      if (refused) throw refused;
      return roundTrip.ask(request, signal);
    },
    // A 2026-07-28 server's round reaches the client as one InputRequiredResult, under the server's
    // keys; all are checked before any is asked, so a refusal never leaves a round half sent.
    async relayRound(requests, signal) {
      for (const request of requests.values()) {
        const refused = refusal(request);
        if (refused) throw refused;
      }
      const answers = [...requests].map(async ([key, request]) => [key, await roundTrip.ask(request, signal, key)] as const);
      return Object.fromEntries(await Promise.all(answers));
    },
  };
  roundTrip.begin(
    pool
      .request(target.server, target.method, target.params, {
        cancellation: roundTrip.cancellation,
        caller,
        clientCapabilities: modern.capabilities ?? {},
        // Only a client that asked for progress gets it, on whichever of its requests is waiting then.
        onProgress: call.progressToken === undefined ? undefined : (progress: Progress) => roundTrip.onProgress?.(progress),
        principal: call.principal,
        trace: call.trace,
        headers: target.headers,
      })
      .catch((error: unknown) => {
        throw described(pool, target, error);
      }),
  );
  return roundTrip;
}

// A principal's missing authorization goes up as it is: the call's answer then carries their link.
function described(pool: ServerPool, target: ForwardTarget, error: unknown): Error {
  return error instanceof PrincipalAuthorizationNeeded ? error : describeFailure(pool, target, error);
}

// One failure text for every forwarded method; the code is the downstream's when it sent one.
function describeFailure(pool: ServerPool, target: ForwardTarget, error: unknown): ProtocolError {
  const { server, label } = target;
  // Made and cut off, unlike the failures below: `data.code` tells a client it may send it again.
  if (isLoadoutError(error, 'DRAIN_LIMIT')) {
    return new ProtocolError(CONNECTION_CLOSED, `${error.message}: ${label} was cancelled; send it again`, {
      code: error.code,
    });
  }
  if (isLoadoutError(error)) {
    // Further lines (a server's stderr after a failed start) stay below the sentence.
    const [first = '', ...more] = error.message.split('\n');
    return new ProtocolError(
      ProtocolErrorCode.InternalError,
      [`${first.replace(/\.$/, '')}. The call to ${label} was not made.`, ...more].join('\n'),
    );
  }
  if (SdkError.isInstance(error) && error.code === SdkErrorCode.RequestTimeout) {
    const seconds = pool.config(server)?.timeout_seconds;
    return new ProtocolError(
      REQUEST_TIMEOUT,
      `Server '${server}' did not answer ${label} within ${seconds} s (timeout_seconds in servers.yaml); try again or raise the timeout.`,
    );
  }
  if (SdkError.isInstance(error) && error.code === SdkErrorCode.ConnectionClosed) {
    const crash = serverCrashOf(error);
    const how = crash ? `its process ${crash.exit}` : 'it may have crashed';
    return new ProtocolError(
      CONNECTION_CLOSED,
      `Server '${server}' closed the connection during ${label} (${how}); the next call restarts it.${stderrBlock(crash?.stderr ?? [])}`,
    );
  }
  if (!ProtocolError.isInstance(error))
    return new ProtocolError(ProtocolErrorCode.InternalError, `Server '${server}' failed on ${label}: ${errorMessage(error)}`);
  return new ProtocolError(error.code, `Server '${server}' failed on ${label}: ${withoutCode(error.message)}`, error.data);
}

// Servers on the 1.x SDK send messages that start "MCP error -32602: "; a wrapping error or an
// isError text needs that once or not at all.
function withoutCode(message: string): string {
  return message.replace(/^MCP error -?\d+: /, '');
}

// The client's answer goes back to the downstream untouched; the downstream's SDK validates it.
const LooseResultSchema = z.looseObject({});

// A person may take a while to answer an elicitation; the downstream's own timeout (and its
// cancellation, which aborts `signal`) is what really bounds the wait.
const RELAY_TIMEOUT_MS = 30 * 60_000;

// The downstream's sampling/elicitation/roots requests during `call` go to the client that made
// it, on the call's own response stream (relatedRequestId), if the client declared the capability.
function relayTo(call: ClientRequest, label: string): DownstreamCaller {
  const { server } = call;
  return {
    owner: server,
    async relay(request, signal) {
      const missing = missingCapability(server.getClientCapabilities(), request);
      if (missing) throw relayRefusal(request, label, `the client that called it did not declare ${missing}`);
      return server.request(request, LooseResultSchema, {
        relatedRequestId: call.requestId,
        signal: AbortSignal.any([signal, call.cancellation.signal]),
        timeout: RELAY_TIMEOUT_MS,
      });
    },
  };
}

function relayRefusal(request: RelayedRequest, label: string, why: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidRequest, `loadout cannot relay ${request.method} from ${label}: ${why}`);
}

function missingCapability(capabilities: ClientCapabilities | undefined, request: RelayedRequest): string | undefined {
  if (request.method === 'roots/list') return capabilities?.roots ? undefined : 'the roots capability';
  if (request.method === 'sampling/createMessage') {
    if (!capabilities?.sampling) return 'the sampling capability';
    const usesTools = request.params.tools !== undefined || request.params.toolChoice !== undefined;
    return usesTools && !capabilities.sampling.tools ? 'sampling with tools (capabilities.sampling.tools)' : undefined;
  }
  if (!capabilities?.elicitation) return 'the elicitation capability';
  const mode = request.params.mode ?? 'form';
  const declared = capabilities.elicitation as { form?: object; url?: object };
  // An empty elicitation capability means form mode (the spec's backwards-compatible reading).
  const supportsForm = declared.form !== undefined || declared.url === undefined;
  if (mode === 'url' && !declared.url) return 'URL-mode elicitation (capabilities.elicitation.url)';
  return mode === 'form' && !supportsForm ? 'form-mode elicitation (capabilities.elicitation.form)' : undefined;
}
