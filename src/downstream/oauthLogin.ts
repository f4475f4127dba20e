// The interactive OAuth login of one HTTP/SSE server (`loadout auth`): a loopback listener for
// the redirect, the SDK's auth() for discovery, registration and PKCE, and the code exchange.
// How the user reaches the authorization URL (browser or printed) is the caller's business.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expandEnvRecord, type ServerConfig } from '../config/index.js';
import { LoadoutError, errorMessage } from '../shared/index.js';
import { StoredOAuthProvider, oauthTargetOf, type OAuthLogin, type OAuthTarget } from './oauthProvider.js';
import { authorizes, type OAuthRecords } from './oauthRecords.js';

/** Options of one login. */
export interface OAuthLoginOptions {
  server: string;
  config: ServerConfig;
  oauthRecords: OAuthRecords;
  env?: NodeJS.ProcessEnv;
  /** Send the user to `url` (open a browser, print it). */
  onAuthorizationUrl(url: URL): void | Promise<void>;
  /** How long to wait for the browser to come back. */
  timeoutMs: number;
  signal?: AbortSignal;
}

const CALLBACK_PATH = '/callback';

/** Run the authorization code flow for `server` and store its tokens. */
export async function loginToServer(options: OAuthLoginOptions): Promise<void> {
  const { server, config } = options;
  const env = options.env ?? process.env;
  const target = oauthTargetOf(server, config, env, options.oauthRecords);
  if (!target || config.type === 'stdio') {
    const why =
      config.type === 'stdio'
        ? 'it is a stdio server'
        : config.oauth === false
          ? 'its entry says oauth: false'
          : 'it sends its own Authorization header';
    throw new LoadoutError('INVALID_ARGUMENT', `Server '${server}' does not use OAuth: ${why}`);
  }
  const { settings } = target;
  const previous = await target.records.read(server);
  const listener = await listenForRedirect(settings.callback_port ?? portOf(previous?.redirectUrl), settings.callback_port !== undefined);
  try {
    const redirectUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}${CALLBACK_PATH}`;
    const { provider, authOptions } = await startLogin(target, config, env, {
      redirectUrl,
      onAuthorizationUrl: (url) => options.onAuthorizationUrl(url),
    });
    const { auth } = await import('@modelcontextprotocol/client');
    const redirect = waitForRedirect(listener, () => provider.sentState, options);
    // Settled early if auth() fails before a redirect is due, so its rejection is never unhandled.
    redirect.catch(() => undefined);
    if ((await auth(provider, authOptions)) === 'AUTHORIZED') return;
    const { code, iss } = await redirect;
    // The issuer the redirect names is checked against the one discovered (RFC 9207), so a mix-up is refused.
    const result = await auth(provider, { ...authOptions, authorizationCode: code, ...(iss === null ? {} : { iss }) });
    if (result !== 'AUTHORIZED') throw new LoadoutError('AUTH_FAILED', `Authorization of '${server}' did not complete`);
  } catch (error) {
    if (error instanceof LoadoutError) throw error;
    throw new LoadoutError('AUTH_FAILED', `Authorization of '${server}' failed: ${errorMessage(error)}`, { cause: error });
  } finally {
    listener.closeAllConnections();
    await new Promise((resolve) => listener.close(resolve));
  }
}

/** What the SDK's auth() is run with for one login: the server, its metadata and the scope. */
export interface LoginAuthOptions {
  serverUrl: string;
  resourceMetadataUrl: URL | undefined;
  scope: string | undefined;
}

/** A login begun: the provider that keeps its records, and the options auth() takes for it. */
interface StartedLogin {
  provider: StoredOAuthProvider;
  authOptions: LoginAuthOptions;
}

/**
 * The provider and auth options of a login to `target` whose browser comes back to `login.redirectUrl`.
 * A login starts from no tokens; a registration made for another redirect URL is useless.
 * `keepAuthorized`: tokens the server has not refused are kept and no login starts (undefined),
 * decided in the same read-modify-write that would forget them, so a sign-in that finished just
 * before is never wiped.
 */
export async function startLogin(
  target: OAuthTarget,
  config: ServerConfig,
  env: NodeJS.ProcessEnv,
  login: OAuthLogin,
): Promise<StartedLogin>;
export async function startLogin(
  target: OAuthTarget,
  config: ServerConfig,
  env: NodeJS.ProcessEnv,
  login: OAuthLogin,
  keepAuthorized: true,
): Promise<StartedLogin | undefined>;
export async function startLogin(
  target: OAuthTarget,
  config: ServerConfig,
  env: NodeJS.ProcessEnv,
  login: OAuthLogin,
  keepAuthorized = false,
): Promise<StartedLogin | undefined> {
  const { server, records, recordUrl } = target;
  const { redirectUrl } = login;
  let authorized = false;
  await records.update(server, recordUrl, (current) => {
    authorized = keepAuthorized && authorizes(current, recordUrl);
    if (authorized) return current;
    const { tokens: _t, tokensSavedAt: _s, clientInformation, ...record } = current;
    return { ...record, redirectUrl, ...(record.redirectUrl === redirectUrl && clientInformation ? { clientInformation } : {}) };
  });
  if (authorized) return undefined;
  const provider = await StoredOAuthProvider.open(target, login);
  const { extractWWWAuthenticateParams: extract } = await import('@modelcontextprotocol/client');
  const headers = config.type === 'stdio' ? {} : expandEnvRecord(config.headers, env, `Server '${server}' headers`);
  const challenge = await probeChallenge(target.serverUrl, headers, (response) => extract(response));
  return {
    provider,
    authOptions: {
      serverUrl: target.serverUrl,
      resourceMetadataUrl: challenge.resourceMetadataUrl,
      scope: challenge.scope ?? target.settings.scope,
    },
  };
}

function portOf(url: string | undefined): number {
  if (url === undefined) return 0;
  try {
    return Number(new URL(url).port) || 0;
  } catch {
    return 0;
  }
}

// The port the client was registered with is reused so the registration stays valid; when it is
// taken, any port will do (and the client registers again), unless the config fixed it.
async function listenForRedirect(port: number, fixed: boolean): Promise<Server> {
  try {
    return await listen(port);
  } catch (error) {
    if (fixed || port === 0)
      throw new LoadoutError('AUTH_FAILED', `Cannot listen for the OAuth redirect on 127.0.0.1:${port}: ${errorMessage(error)}`);
    return listen(0);
  }
}

// node:http is loaded here, on a login's first use, not with the gateway (which never logs in).
export async function listen(port: number): Promise<Server> {
  const { createServer } = await import('node:http');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

type ExtractChallenge = (response: Response) => { resourceMetadataUrl?: URL; scope?: string };

// The server's 401 names its protected-resource metadata and scope (RFC 9728); without it the
// SDK falls back to the well-known locations.
async function probeChallenge(
  serverUrl: string,
  headers: Record<string, string>,
  extract: ExtractChallenge,
): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
  try {
    const response = await fetch(serverUrl, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }),
      signal: AbortSignal.timeout(10_000),
    });
    await response.body?.cancel();
    return response.status === 401 ? extract(response) : {};
  } catch {
    return {};
  }
}

/** What the browser brings back: the authorization code, and the issuer when the server names it. */
export interface AuthorizationRedirect {
  code: string;
  iss: string | null;
}

// Resolves with the authorization code the browser brings back; rejects on an error redirect,
// a wrong state, the timeout or the caller's signal.
function waitForRedirect(
  listener: Server,
  sentState: () => string | undefined,
  options: Pick<OAuthLoginOptions, 'server' | 'timeoutMs' | 'signal'>,
): Promise<AuthorizationRedirect> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        finish(
          new LoadoutError(
            'AUTH_FAILED',
            `Authorization of '${options.server}' timed out: the browser did not come back within ${Math.round(options.timeoutMs / 1000)} s`,
          ),
        ),
      options.timeoutMs,
    );
    timer.unref();
    const onAbort = (): void => finish(new LoadoutError('AUTH_FAILED', `Authorization of '${options.server}' was cancelled`));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    function finish(outcome: AuthorizationRedirect | LoadoutError): void {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      listener.removeListener('request', onRequest);
      if (outcome instanceof LoadoutError) reject(outcome);
      else resolve(outcome);
    }
    function onRequest(request: IncomingMessage, response: ServerResponse): void {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== CALLBACK_PATH) {
        response.writeHead(404).end();
        return;
      }
      const outcome = redirectOutcome(url.searchParams, sentState(), options.server);
      showOutcome(response, outcome instanceof LoadoutError ? outcome : options.server);
      finish(outcome);
    }
    listener.on('request', onRequest);
  });
}

/** The page the browser lands on after the redirect: the server now authorized, or why not. */
export function showOutcome(response: ServerResponse, outcome: string | LoadoutError): void {
  const ok = typeof outcome === 'string';
  response.writeHead(ok ? 200 : 400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  response.end(ok ? `loadout: '${outcome}' is authorized. You can close this tab.\n` : `loadout: ${outcome.message}\n`);
}

/** The browser's redirect to the login that sent `sentState`: its code, or why it failed. */
export function redirectOutcome(
  params: URLSearchParams,
  sentState: string | undefined,
  server: string,
): AuthorizationRedirect | LoadoutError {
  const error = params.get('error');
  if (error !== null) {
    const description = params.get('error_description');
    return new LoadoutError('AUTH_FAILED', `Authorization of '${server}' was refused: ${error}${description ? ` (${description})` : ''}`);
  }
  if (sentState !== undefined && params.get('state') !== sentState)
    return new LoadoutError('AUTH_FAILED', `Authorization of '${server}' failed: the redirect's state does not match the request`);
  const code = params.get('code');
  if (!code) return new LoadoutError('AUTH_FAILED', `Authorization of '${server}' failed: the redirect carries no code`);
  return { code, iss: params.get('iss') };
}
