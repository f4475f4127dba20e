// How a connection's failures are told apart and worded: a crashed stdio server, a start that
// failed or timed out, a lost session, refused credentials, a list answer loadout cannot use.
// Error classes come from the server package, which the gateway has loaded already: the client
// package is imported with the first connection (its errors match these across packages).
import {
  OAuthError,
  OAuthErrorCode,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
} from '@modelcontextprotocol/server';
import type { Transport } from '@modelcontextprotocol/client';
import { LoadoutError, errorMessage, isLoadoutError } from '../shared/index.js';
import { childOf } from './connectionTransport.js';
import type { RelayedRequest } from './inFlightCallers.js';
import type { ListFailure } from './serverDefinitions.js';
import { needsAuthorizationError } from './oauthProvider.js';
import { stderrBlock } from './stderrTail.js';

/** How a stdio server's process ended under a request (the data of its ConnectionClosed error). */
export interface ServerCrash {
  /** e.g. "exited with code 1". */
  exit: string;
  /** Its last stderr lines, `${VAR}` values masked. */
  stderr: string[];
}

/** The crash behind a ConnectionClosed error, when the server's process ended. */
export function serverCrashOf(error: unknown): ServerCrash | undefined {
  if (!SdkError.isInstance(error) || error.code !== SdkErrorCode.ConnectionClosed) return undefined;
  const data = error.data as Partial<ServerCrash> | undefined;
  return typeof data?.exit === 'string' && Array.isArray(data.stderr) ? (data as ServerCrash) : undefined;
}

/** Whether `error` is a request's or a signal's timeout. */
export function isTimeout(error: unknown): boolean {
  return (
    (SdkError.isInstance(error) && error.code === SdkErrorCode.RequestTimeout) || (error instanceof Error && error.name === 'TimeoutError')
  );
}

// Why a start failed, in plain words: a child that exited says how, with its last stderr lines
// (the real error: "Cannot find module …"), rather than the SDK's "Connection closed".
export function startFailure(error: unknown, transport: Transport, timeoutMs: number): string {
  const child = childOf(transport);
  const code = SdkError.isInstance(error) ? error.code : undefined;
  const timedOut = isTimeout(error);
  let reason = errorMessage(error);
  if (timedOut) reason = `it did not answer the MCP handshake (initialize) within ${Math.round(timeoutMs / 1000)} s`;
  else if (code === SdkErrorCode.ConnectionClosed && child?.exit) reason = `its process ${child.exit} before answering`;
  const lines = child?.stderrLines() ?? [];
  if (!lines.length) return child?.exit && !timedOut ? `${reason}; it wrote nothing to stderr` : reason;
  // The first line stands alone (a caller may add to it); the lines the server wrote follow it.
  return `${reason}.${stderrBlock(lines)}`;
}

// A list answer loadout cannot use: the server sent it, so the server started and answered.
export class MalformedListError extends Error {
  constructor(what: string) {
    super(`the server answered ${what}`);
  }
}

// Whether a list failed in the server's answer (a JSON-RPC error, a timeout, a malformed page)
// rather than in loadout's own handling, which keeps its meaning: a lost session is retried,
// a refused credential asks for a login, a shutdown is a shutdown.
export function isListAnswerFailure(error: unknown): boolean {
  return !isLoadoutError(error);
}

// Why an optional list failed: the server's answer in words, its JSON-RPC code after them for a
// reader, and the code kept apart as well, which says the kind (-32601: a list declared but never
// implemented) where the words may not.
export function listFailureOf(method: string, error: unknown): ListFailure {
  const message = errorMessage(error);
  if (!ProtocolError.isInstance(error)) return { text: `${method} failed: ${message}` };
  const text = message.includes(String(error.code)) ? message : `${message} (${error.code})`;
  return { text: `${method} failed: ${text}`, rpcCode: error.code };
}

// A POST the server answered 404 for the session id: streamable HTTP or an SSE message endpoint
// that no longer exists. The server did not process it.
export function isSessionLost(error: unknown): boolean {
  return error instanceof Error && answeredStatusOf(error) === 404;
}

// The HTTP status a server answered a request with, from the failure the SDK's transport threw:
// SdkHttpError carries it as `status`, SseError (the SSE stream's) as its numeric `code`. The SSE
// transport's POST keeps it only in its own fixed words ("Error POSTing to endpoint (HTTP 404): …"),
// which begin every such failure and nothing a server sends: they are read here, once, as that
// status. A JSON-RPC error the server sent may carry any code, 404 too: it is an answer, not a status.
function answeredStatusOf(error: Error): number | undefined {
  if (ProtocolError.isInstance(error)) return undefined;
  if (SdkHttpError.isInstance(error)) return error.status;
  const { code } = error as { code?: unknown };
  if (typeof code === 'number') return code;
  const posted = SSE_POST_FAILURE.exec(error.message);
  return posted ? Number(posted[1]) : undefined;
}

const SSE_POST_FAILURE = /^Error POSTing to endpoint \(HTTP (\d{3})\)/;

// The HTTP status of a transport failure: SdkHttpError carries it as `status`, SseError as `code`.
function httpStatusOf(error: Error): unknown {
  const { status, code } = error as { status?: unknown; code?: unknown };
  return status ?? code;
}

/**
 * Whether a server refused loadout's request for want of credentials or rights: it answered 401
 * or 403 (loadout's own refusal, AUTH_FAILED, among the causes too), or its OAuth error says the
 * token is invalid or its scope too small. Decided by status and class, never by the words.
 */
export async function refusesAccess(error: unknown): Promise<boolean> {
  const { InsufficientScopeError, UnauthorizedError } = await import('@modelcontextprotocol/client');
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (isLoadoutError(cause, 'AUTH_FAILED')) return true;
    const status = answeredStatusOf(cause);
    if (status === 401 || status === 403) return true;
    if (OAuthError.isInstance(cause) && cause.code === (OAuthErrorCode.InvalidToken as string)) return true;
    if (cause instanceof UnauthorizedError || cause instanceof InsufficientScopeError) return true;
  }
  return false;
}

export function refuseRelayedRequest(request: RelayedRequest): Promise<never> {
  return Promise.reject(
    new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `loadout cannot answer ${request.method} here: no client session is waiting on this server`,
    ),
  );
}

// A 401 from a server loadout logs in to needs `loadout auth`; from one that sends its own
// Authorization header (or has `oauth: false`), a login cannot help: the header is what to fix.
export function refusedCredentials(server: string, usesOAuth: boolean): LoadoutError {
  if (usesOAuth) return needsAuthorizationError(server);
  return new LoadoutError(
    'AUTH_FAILED',
    `Server '${server}' refused loadout's credentials (HTTP 401): check the Authorization header under headers: for ${server} in servers.yaml`,
  );
}

/**
 * Whether `error` means the server refused loadout's credentials and only a login can help: the
 * provider found nothing to refresh, the SDK gave up (UnauthorizedError), or a 401 came back
 * right after a refresh.
 */
export async function isAuthorizationFailure(error: unknown): Promise<boolean> {
  if (isLoadoutError(error, 'NEEDS_AUTHORIZATION')) return true;
  if (!(error instanceof Error)) return false;
  if (httpStatusOf(error) === 401) return true;
  // Imported only on this failure path: the auth module is not needed to start.
  const { UnauthorizedError } = await import('@modelcontextprotocol/client');
  return error instanceof UnauthorizedError;
}
