// loadout's OAuthClientProvider for one HTTP/SSE server: the SDK's client auth (discovery,
// registration, PKCE, refresh) reads and writes the server's OAuth file through it. Without a
// login in progress it never starts one: where the SDK would send a browser to the
// authorization server, it marks the server as needing a login and fails with a one-line error.
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/client';
import { randomBytes } from 'node:crypto';
import { expandEnv, referencedValues, oauthSettingsOf, type OAuthRecord, type OAuthSettings, type ServerConfig } from '../config/index.js';
import { LoadoutError } from '../shared/index.js';
import type { OAuthRecords } from './oauthRecords.js';

/** A login in progress (`loadout auth`): where the browser comes back, and how to send it off. */
export interface OAuthLogin {
  redirectUrl: string;
  onAuthorizationUrl(url: URL): void | Promise<void>;
}

/** Where a server's OAuth lives and how it is set up. */
export interface OAuthTarget {
  server: string;
  /** The server URL with `${VAR}` expanded: what is sent, never what is written. */
  serverUrl: string;
  /** The URL the server's record is kept under: serverUrl, or the url as configured when a `${VAR}` went into it. */
  recordUrl: string;
  /** What the url's `${VAR}`s expand to: discovery state holding one is kept in memory only. */
  urlValues: readonly string[];
  records: OAuthRecords;
  settings: OAuthSettings;
}

/** The OAuth target of a server that may use OAuth (see oauthSettingsOf), with `${VAR}` expanded. */
export function oauthTargetOf(
  server: string,
  config: ServerConfig,
  env: NodeJS.ProcessEnv,
  records: OAuthRecords,
): OAuthTarget | undefined {
  const settings = oauthSettingsOf(config);
  if (!settings || config.type === 'stdio') return undefined;
  const where = `Server '${server}'`;
  // Normalised as the transport will send it, so a login and a connection agree on the record.
  const serverUrl = new URL(expandEnv(config.url, env, `${where} url`)).href;
  const urlValues = referencedValues(config.url, env).map(({ value }) => value);
  return {
    server,
    serverUrl,
    recordUrl: urlValues.length === 0 ? serverUrl : config.url,
    urlValues,
    records,
    settings: settings.client_secret
      ? { ...settings, client_secret: expandEnv(settings.client_secret, env, `${where} oauth.client_secret`) }
      : settings,
  };
}

// A refresh answer is shared with refreshes of the same token that start this soon after it: with
// rotating refresh tokens (OAuth 2.1), a second request with the old token would be refused.
const REFRESH_REUSE_MS = 30_000;

/** A token endpoint's answer, kept so each waiting caller gets its own Response. */
interface RefreshAnswer {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  body: string;
}

// An access token this close to its end is renewed before it is sent: a request in flight must
// not outlive it, and a clock a little apart from the authorization server's must not matter.
const RENEW_AHEAD_MS = 60_000;
// How long a failed renewal waits before the next request tries again.
const RENEW_RETRY_MS = 10_000;

// Used only until a login records the real one: refresh and discovery never send it.
const UNSET_REDIRECT_URL = 'http://127.0.0.1/callback';

/** The error a server that needs a login answers with, everywhere it shows. */
export function needsAuthorizationError(server: string): LoadoutError {
  return new LoadoutError('NEEDS_AUTHORIZATION', `Server '${server}' needs authorization: run loadout auth ${server}`);
}

/** An OAuthClientProvider backed by the server's OAuth record (a file, or the team store). */
export class StoredOAuthProvider implements OAuthClientProvider {
  readonly #target: OAuthTarget;
  readonly #login: OAuthLogin | undefined;
  #record: OAuthRecord;
  #codeVerifier: string | undefined;
  /** Discovery state that holds an expanded `${VAR}` of the url, so it is not written. */
  #unwrittenDiscovery: OAuthDiscoveryState | undefined;
  #state: string | undefined;
  readonly #refreshes = new Map<string, Promise<RefreshAnswer>>();
  #renewal: Promise<void> | undefined;
  /** Set while a renewal ahead of expiry runs: its failure is not a reason to ask for a login. */
  #renewing = false;
  /** After a failed renewal, when the next may be tried (Date.now() time). */
  #renewAfter = 0;

  private constructor(target: OAuthTarget, record: OAuthRecord, login: OAuthLogin | undefined) {
    this.#target = target;
    this.#record = record;
    this.#login = login;
  }

  /** A provider with the server's record read once; later writes keep the copy current. */
  static async open(target: OAuthTarget, login?: OAuthLogin): Promise<StoredOAuthProvider> {
    const stored = await target.records.read(target.server);
    const record = stored?.serverUrl === target.recordUrl ? stored : { serverUrl: target.recordUrl };
    return new StoredOAuthProvider(target, record, login);
  }

  /**
   * The fetch the server's transport (and so the SDK's auth) uses. Concurrent requests that hit
   * an expired token each start a refresh; those of one refresh token share one token request,
   * so a rotating authorization server does not see the old token twice and revoke the login.
   */
  readonly fetch = (url: string | URL, init?: RequestInit): Promise<Response> => {
    const refreshToken =
      init?.method === 'POST' && init.body instanceof URLSearchParams && init.body.get('grant_type') === 'refresh_token'
        ? init.body.get('refresh_token')
        : null;
    if (refreshToken === null) return fetch(url, init);
    let answer = this.#refreshes.get(refreshToken);
    if (!answer) {
      answer = fetch(url, init).then(async (response) => ({
        status: response.status,
        statusText: response.statusText,
        headers: [...response.headers],
        body: await response.text(),
      }));
      this.#refreshes.set(refreshToken, answer);
      const forget = (): void => void this.#refreshes.delete(refreshToken);
      // A failed refresh is not kept: the next attempt asks again.
      answer.then((kept) => (kept.status < 400 ? setTimeout(forget, REFRESH_REUSE_MS).unref() : forget()), forget);
    }
    return answer.then(({ body, ...rest }) => new Response(body, rest));
  };

  get redirectUrl(): string {
    return this.#login?.redirectUrl ?? this.#record.redirectUrl ?? UNSET_REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { client_secret: secret, scope } = this.#target.settings;
    return {
      client_name: 'loadout',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: secret ? 'client_secret_post' : 'none',
      ...(scope ? { scope } : {}),
    };
  }

  /** The state parameter of this login; the redirect must bring it back. */
  state(): string {
    this.#state ??= randomBytes(16).toString('base64url');
    return this.#state;
  }

  /** The state sent with the authorization request, if one was sent. */
  get sentState(): string | undefined {
    return this.#state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const { client_id: clientId, client_secret: clientSecret } = this.#target.settings;
    if (clientId) return { client_id: clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) };
    const stored = this.#record.clientInformation as OAuthClientInformationMixed | undefined;
    // Registering belongs to a login: a gateway that registered on every failed start would
    // leave a trail of clients at the authorization server.
    if (!stored && !this.#login) await this.#needsAuthorization();
    return stored;
  }

  async saveClientInformation(clientInformation: OAuthClientInformationMixed): Promise<void> {
    await this.#update((record) => ({ ...record, clientInformation, redirectUrl: this.redirectUrl }));
  }

  /**
   * The stored tokens, renewed first when the access token ends within RENEW_AHEAD_MS and a
   * refresh token is at hand, so a call never has to fail on an expired token and retry. The
   * SDK's auth run reads the tokens too: while a renewal runs, they are returned as stored.
   */
  async tokens(): Promise<OAuthTokens | undefined> {
    if (!this.#renewal && Date.now() >= this.#renewAfter && this.#expiresSoon()) {
      this.#renewal = this.#renew().finally(() => (this.#renewal = undefined));
      await this.#renewal;
    }
    return this.#record.tokens as OAuthTokens | undefined;
  }

  #expiresSoon(): boolean {
    const tokens = this.#record.tokens as OAuthTokens | undefined;
    const savedAt = Date.parse(this.#record.tokensSavedAt ?? '');
    if (!tokens?.refresh_token || tokens.expires_in === undefined || Number.isNaN(savedAt)) return false;
    return savedAt + tokens.expires_in * 1000 - Date.now() < RENEW_AHEAD_MS;
  }

  // The SDK's own auth run refreshes with the stored refresh token (discovery and client
  // authentication included). A refused refresh token makes the SDK drop the tokens, so the next
  // request meets a 401 and the server is marked as needing a login then. Any other failure (the
  // authorization server down or erring) leaves the still-valid token in use; the SDK would go on
  // to a new login, which a renewal must not mark as needed (see redirectToAuthorization), and
  // the renewal is tried again after a pause rather than before every request.
  async #renew(): Promise<void> {
    const { auth } = await import('@modelcontextprotocol/client');
    this.#renewing = true;
    try {
      await auth(this, { serverUrl: this.#target.serverUrl, fetchFn: this.fetch });
    } catch {
      this.#renewAfter = Date.now() + RENEW_RETRY_MS;
    } finally {
      this.#renewing = false;
    }
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.#update(({ needsAuthorizationSince: _since, ...record }) => ({
      ...record,
      tokens,
      tokensSavedAt: new Date().toISOString(),
    }));
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.#renewing) throw new LoadoutError('AUTH_FAILED', `Renewing the access token of '${this.#target.server}' failed`);
    if (!this.#login) return this.#needsAuthorization();
    await this.#login.onAuthorizationUrl(authorizationUrl);
  }

  // The verifier lives only as long as the login that made it: the same process exchanges the code.
  saveCodeVerifier(codeVerifier: string): void {
    this.#codeVerifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#codeVerifier === undefined) throw new LoadoutError('AUTH_FAILED', `No login in progress for '${this.#target.server}'`);
    return this.#codeVerifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.#codeVerifier = undefined;
      return;
    }
    if (scope === 'discovery' || scope === 'all') this.#unwrittenDiscovery = undefined;
    await this.#update(({ clientInformation, tokens, tokensSavedAt, discoveryState, ...rest }) => ({
      ...rest,
      ...(scope === 'client' || scope === 'all' ? {} : { clientInformation }),
      ...(scope === 'tokens' || scope === 'all' ? {} : { tokens, tokensSavedAt }),
      ...(scope === 'discovery' || scope === 'all' ? {} : { discoveryState }),
    }));
  }

  // The SDK asks for this first in every auth() run: the moment to pick up what another process
  // (a `loadout auth` since this connection opened) wrote, so a stale refresh token is not used.
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const stored = await this.#target.records.read(this.#target.server);
    this.#record = stored?.serverUrl === this.#target.recordUrl ? stored : { serverUrl: this.#target.recordUrl };
    return (this.#record.discoveryState as OAuthDiscoveryState | undefined) ?? this.#unwrittenDiscovery;
  }

  // Discovery starts from the expanded URL, and the metadata URLs it finds can hold a `${VAR}`'s
  // value (one in the path or the host): such a state lasts as long as this process.
  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    const text = JSON.stringify(state);
    if (
      this.#target.urlValues.some((value) => text.includes(JSON.stringify(value).slice(1, -1)) || text.includes(encodeURIComponent(value)))
    ) {
      this.#unwrittenDiscovery = { ...state };
      return;
    }
    await this.#update((record) => ({ ...record, discoveryState: { ...state } }));
  }

  async #needsAuthorization(): Promise<never> {
    await this.#update((record) => ({ ...record, needsAuthorizationSince: record.needsAuthorizationSince ?? new Date().toISOString() }));
    throw needsAuthorizationError(this.#target.server);
  }

  async #update(change: (record: OAuthRecord) => OAuthRecord): Promise<void> {
    this.#record = await this.#target.records.update(this.#target.server, this.#target.recordUrl, change);
  }
}
