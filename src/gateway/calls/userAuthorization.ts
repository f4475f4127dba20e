// The answer to a call of a `credentials: per-user` server by a principal who has not authorized
// it yet: it carries their authorization link. A client that declared URL-mode elicitation is
// asked to open it, and the call is made once the browser has come back: a 2025 client by an
// elicitation/create request (mode "url"), a 2026-07-28 client, which cannot be sent requests, by
// an InputRequiredResult carrying that elicitation (inputRounds.ts), the call then made on its
// retry. Any other client gets an isError result with the link and one sentence, and calls again
// after. Once a principal has authorized a server no one had listed yet, it is discovered.
import type { CallToolResult, ClientCapabilities, ElicitRequest } from '@modelcontextprotocol/server';
import { randomUUID } from 'node:crypto';
import { AUTHORIZATION_CALLBACK_PATH, PrincipalAuthorizationNeeded, type AuthorizationLink } from '../../downstream/index.js';
import { LOCAL_PRINCIPAL, STATIC_TOKEN_ISSUER, type Principal } from '../../identity/index.js';
import { resolveCatalogName } from '../../registry/index.js';
import { errorMessage, untilAborted } from '../../shared/index.js';
import type { GatewayContext } from '../context.js';
import { forward, type ClientRequest } from './forward.js';
import { RoundTripCall } from '../inputRounds.js';
import { errorResult } from '../toolResults.js';

// How long a call waits, after the person agreed to open the link, for the browser to come back.
const AUTHORIZATION_WAIT_MS = 10 * 60_000;

/**
 * Run `send`, the call `label` (e.g. `github.list_issues`); a principal's missing authorization is
 * answered with their link (see the file's header).
 */
export async function withUserAuthorization<T>(
  context: GatewayContext,
  call: ClientRequest,
  label: string,
  send: (call: ClientRequest) => Promise<T>,
): Promise<T | CallToolResult> {
  try {
    return await send(call);
  } catch (error) {
    if (!(error instanceof PrincipalAuthorizationNeeded)) throw error;
    return authorizationAnswer(context, call, label, error.server, error.principal, send);
  }
}

/**
 * For a call-tool of `name` the catalog does not know: when it is `server.tool` of a per-user server
 * nobody has listed yet, it is discovered with the caller's authorization (asked for first, as for
 * a call) and `retry` runs. Undefined when the name names no such server.
 */
export async function authorizeUnlisted(
  context: GatewayContext,
  name: string,
  call: ClientRequest,
  retry: (call: ClientRequest) => Promise<CallToolResult>,
): Promise<CallToolResult | undefined> {
  const server = name.slice(0, Math.max(0, name.indexOf('.')));
  const config = context.pool.config(server);
  const { principal } = call;
  if (config?.type === 'stdio' || config?.credentials !== 'per-user' || principal === undefined) return undefined;
  // A 2026-07-28 client's retry with its answer to the authorization it was asked for continues
  // that call (the server may be listed only once the browser has come back).
  if (call.modern?.requestState !== undefined)
    return forward(context.pool, { server, method: 'tools/call', params: undefined, label: name }, call) as Promise<CallToolResult>;
  // A discovery under way (someone has just authorized it) lists it first.
  await context.catalog.settled();
  if (resolveCatalogName(context.catalog.current, name, context.naming)) return retry(call);
  if (!context.catalog.undiscoveredServers.includes(server)) return undefined;
  // Someone may have authorized it since start: their token lists it.
  await context.catalog.discover([server]);
  if (!context.catalog.undiscoveredServers.includes(server)) return retry(call);
  return authorizationAnswer(context, call, name, server, principal, retry);
}

async function authorizationAnswer<T>(
  context: GatewayContext,
  call: ClientRequest,
  label: string,
  server: string,
  principal: string,
  retry: (call: ClientRequest) => Promise<T>,
): Promise<T | CallToolResult> {
  const authorizations = context.pool.authorizations;
  if (!authorizations) return errorResult(`Server '${server}' needs your own authorization, and this loadout keeps no OAuth records.`);
  let link: AuthorizationLink | undefined;
  try {
    link = await authorizations.link(server, principal, whoIs(context.principal, principal));
  } catch (error) {
    return errorResult(`Server '${server}' needs your own authorization, which cannot start now: ${errorMessage(error)}`);
  }
  if (!link) return retry(call);
  auditAuthorization(context, server, link);
  const authorized = link.authorized.then(() => discoverIfUnlisted(context, server));
  // Nobody waits on it when the answer is the link itself: a refusal or an expiry is no crash.
  authorized.catch(() => undefined);
  const linkText = `Server '${server}' needs your own authorization: open ${link.url} in a browser to sign in, then call again.`;
  const message = `Sign in to '${server}' so loadout can call it as you.`;
  if (call.modern) {
    if (!declaresUrlElicitation(call.modern.capabilities)) return errorResult(linkText);
    return askInRound(context, call, label, { mode: 'url', url: link.url, message }, authorized, linkText, retry) as Promise<T>;
  }
  if (!declaresUrlElicitation(call.server.getClientCapabilities())) return errorResult(linkText);
  const elicitationId = randomUUID();
  try {
    const answer = await call.server.elicitInput(
      { mode: 'url', elicitationId, url: link.url, message },
      { relatedRequestId: call.requestId, signal: call.cancellation.signal, timeout: AUTHORIZATION_WAIT_MS },
    );
    if (answer.action !== 'accept') return errorResult(linkText);
    await untilAuthorized(authorized, call.cancellation.signal);
  } catch (error) {
    return errorResult(`${linkText} (${errorMessage(error)})`);
  }
  void call.server
    .createElicitationCompletionNotifier(elicitationId, { relatedRequestId: call.requestId })()
    .catch(() => undefined);
  return retry(call);
}

// The principal `id` as its sign-in page names them to a person: the subject their identity
// provider vouches for, a static token by the start of its id (the token itself is never shown),
// the one user of a gateway without tokens.
function whoIs(principal: Principal, id: string): string {
  if (principal.id !== id) return `principal ${id}`;
  if (principal.issuer === STATIC_TOKEN_ISSUER) return `the holder of access token ${id.slice(0, 8)}…`;
  if (principal.id === LOCAL_PRINCIPAL.id) return 'the user of this loadout';
  return `${principal.subject} (${principal.issuer})`;
}

function declaresUrlElicitation(capabilities: ClientCapabilities | undefined): boolean {
  return (capabilities?.elicitation as { url?: object } | undefined)?.url !== undefined;
}

/**
 * Ask a 2026-07-28 client to open the link: the answer is an InputRequiredResult with the URL-mode
 * elicitation (2026-07-28 has no elicitationId: the call's retry is its completion), and the call
 * waits for the retry like a downstream's question does (InputRounds). The retry carries the
 * client's answer; an accepted one waits there for the browser, then the call is made and its
 * result is the retry's answer. The call is made under the round's cancellation, which the retry
 * cancels (the first request's is over).
 */
async function askInRound(
  context: GatewayContext,
  call: ClientRequest,
  label: string,
  params: { mode: 'url'; url: string; message: string },
  authorized: Promise<void>,
  linkText: string,
  retry: (call: ClientRequest) => Promise<unknown>,
): Promise<Record<string, unknown>> {
  const round = new RoundTripCall(label);
  const { signal } = round.cancellation;
  const afterAnswer = async (): Promise<Record<string, unknown>> => {
    const answer = await round.ask({ method: 'elicitation/create', params } as ElicitRequest, signal);
    if (answer.action !== 'accept') return errorResult(linkText);
    await untilAuthorized(authorized, signal);
    return (await retry({ ...call, cancellation: round.cancellation, progressToken: undefined })) as Record<string, unknown>;
  };
  round.begin(afterAnswer().catch((error: unknown) => errorResult(`${linkText} (${errorMessage(error)})`)));
  await round.next();
  const requestState = context.inputRounds.park(round, AUTHORIZATION_WAIT_MS);
  return { resultType: 'input_required', inputRequests: round.inputRequests(), requestState };
}

// Links already recorded: calls of one principal that share a link make one record of it.
const auditedLinks = new WeakSet<AuthorizationLink>();

// The audit record of a principal's authorization: how its flow ended (the tokens stored, or the
// login refused or expired), timed from the link's first answer; written once per link.
function auditAuthorization(context: GatewayContext, server: string, link: AuthorizationLink): void {
  const { audit, principal } = context;
  if (!audit.enabled || auditedLinks.has(link)) return;
  auditedLinks.add(link);
  const startedAt = Date.now();
  const started = performance.now();
  const record = (outcome: 'ok' | 'failed', detail?: string): void =>
    audit.record({
      startedAt,
      principal,
      action: 'authorization',
      method: `GET ${AUTHORIZATION_CALLBACK_PATH}`,
      server,
      hasArguments: false,
      outcome,
      durationMs: performance.now() - started,
      ...(detail === undefined ? {} : { detail }),
    });
  link.authorized.then(
    () => record('ok'),
    (error: unknown) => record('failed', errorMessage(error)),
  );
}

// A server no principal could list until now is listed with the token just stored.
async function discoverIfUnlisted(context: GatewayContext, server: string): Promise<void> {
  if (context.catalog.undiscoveredServers.includes(server)) await context.catalog.discover([server]);
}

// The browser's return, or the call's end, or the wait's: whichever is first.
function untilAuthorized(authorized: Promise<void>, signal: AbortSignal): Promise<void> {
  return untilAborted(authorized, AbortSignal.any([signal, AbortSignal.timeout(AUTHORIZATION_WAIT_MS)]));
}
