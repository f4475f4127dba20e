// Each principal's own authorization of a `credentials: per-user` server, asked for on their first
// call: a link to loadout's sign-in page (signInPage.ts: whose sign-in, to which server), which
// leads on to the server's authorization server, whose redirect comes back to loadout (the
// callback route of its HTTP server, or over stdio a loopback listener of its own, as `loadout
// auth` has). A flow is bound to one (server, principal) slot by its `state`, random and good for
// one redirect, and by its PKCE verifier, which never leaves this process: a redirect can only
// complete the flow that sent it, into the slot that flow was started for.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerConfig } from '../config/index.js';
import { LoadoutError, errorMessage } from '../shared/index.js';
import { listen, redirectOutcome, showOutcome, startLogin, type LoginAuthOptions } from './oauthLogin.js';
import { oauthTargetOf, type StoredOAuthProvider } from './oauthProvider.js';
import { showSignInPage } from './signInPage.js';
import { principalOAuthRecords, principalSlot, type OAuthRecords } from './oauthRecords.js';

/** The path of the redirect, on loadout's HTTP server and on the stdio loopback listener alike. */
export const AUTHORIZATION_CALLBACK_PATH = '/oauth/callback';
/** The path of a link's sign-in page (`?state=`), beside the callback. */
export const AUTHORIZATION_START_PATH = '/oauth/sign-in';

// How long a link stays good: time to sign in, not a standing invitation.
const FLOW_LIFETIME_MS = 10 * 60_000;

/** A link a principal follows to authorize a server, and the moment they have. */
export interface AuthorizationLink {
  /** loadout's sign-in page of the flow, which names whose it is and leads to the authorization page. */
  readonly url: string;
  /** Settles when the browser came back with the tokens stored; rejects when refused or expired. */
  readonly authorized: Promise<void>;
}

interface Flow {
  readonly server: string;
  readonly principal: string;
  /** The principal as a person knows them, for the sign-in page. */
  readonly who: string;
  /** The authorization server's page the sign-in page leads to. */
  readonly authorizationUrl: string;
  readonly state: string;
  readonly provider: StoredOAuthProvider;
  readonly authOptions: LoginAuthOptions;
  readonly link: AuthorizationLink;
  settle(outcome: LoadoutError | undefined): void;
}

/** Options of PrincipalAuthorizations. */
export interface PrincipalAuthorizationsOptions {
  records: OAuthRecords;
  env: NodeJS.ProcessEnv;
  /** The server's current config. */
  configOf(server: string): ServerConfig | undefined;
  /** A principal has authorized a server: their connection and discovery may use it now. */
  onAuthorized(server: string, principal: string): void;
}

/** The authorization flows of principals to per-user servers, and where their redirects come back. */
export class PrincipalAuthorizations {
  readonly #options: PrincipalAuthorizationsOptions;
  /** Set by the HTTP server: its callback route's URL. Without it a loopback listener is opened. */
  #redirectUrl: string | undefined;
  #loopback: Promise<Server> | undefined;
  readonly #byState = new Map<string, Flow>();
  readonly #bySlot = new Map<string, Flow>();
  /** Flows being started, by slot: concurrent calls of one principal share one link. */
  readonly #starting = new Map<string, Promise<AuthorizationLink | undefined>>();

  constructor(options: PrincipalAuthorizationsOptions) {
    this.#options = options;
  }

  /** Have the browser come back to `url` (loadout's own HTTP server, AUTHORIZATION_CALLBACK_PATH). */
  redirectTo(url: string): void {
    this.#redirectUrl = url;
  }

  /**
   * The link `principal` (shown as `who`) follows to authorize `server`: the pending one while it
   * is good, else a new flow's. Undefined when the principal turns out to be authorized already.
   */
  link(server: string, principal: string, who: string = principal): Promise<AuthorizationLink | undefined> {
    const slot = principalSlot(server, principal);
    const pending = this.#bySlot.get(slot);
    if (pending) return Promise.resolve(pending.link);
    let starting = this.#starting.get(slot);
    if (!starting) {
      starting = this.#start(server, principal, who, slot).finally(() => this.#starting.delete(slot));
      this.#starting.set(slot, starting);
    }
    return starting;
  }

  async #start(server: string, principal: string, who: string, slot: string): Promise<AuthorizationLink | undefined> {
    const config = this.#options.configOf(server);
    const records = principalOAuthRecords(this.#options.records, principal);
    const target = config && oauthTargetOf(server, config, this.#options.env, records);
    if (!config || !target) throw new LoadoutError('SERVER_NOT_FOUND', `Server '${server}' has no OAuth for its users to authorize`);
    let url: URL | undefined;
    const redirectUrl = this.#redirectUrl ?? (await this.#loopbackUrl());
    // A login starts from no tokens (startLogin forgets them): tokens the server has not refused
    // (another call's sign-in finished while this one waited) are kept, and the caller calls again.
    const login = await startLogin(
      target,
      config,
      this.#options.env,
      { redirectUrl, onAuthorizationUrl: (sent) => void (url = sent) },
      true,
    );
    if (!login) return undefined;
    const { provider, authOptions } = login;
    const { auth } = await import('@modelcontextprotocol/client');
    try {
      // From no tokens (startLogin), auth() can only send the browser off: onAuthorizationUrl hears where.
      await auth(provider, authOptions);
    } catch (error) {
      throw new LoadoutError('AUTH_FAILED', `Authorization of '${server}' could not start: ${errorMessage(error)}`, { cause: error });
    }
    const state = provider.sentState;
    if (url === undefined || state === undefined)
      throw new LoadoutError('AUTH_FAILED', `Authorization of '${server}' could not start: no authorization URL was made`);
    const page = new URL(AUTHORIZATION_START_PATH, redirectUrl);
    page.searchParams.set('state', state);
    return this.#begin({ server, principal, who, authorizationUrl: url.href, state, provider, authOptions }, page.href, slot).link;
  }

  /** Complete the flow a redirect belongs to (by its state); answers with the server authorized. */
  async complete(params: URLSearchParams): Promise<string> {
    const flow = this.#byState.get(params.get('state') ?? '');
    if (!flow)
      throw new LoadoutError(
        'AUTH_FAILED',
        'This authorization is unknown or has expired (a link works once); call the tool again for a new link',
      );
    this.#forget(flow);
    const outcome = redirectOutcome(params, flow.state, flow.server);
    try {
      if (outcome instanceof LoadoutError) throw outcome;
      const { auth } = await import('@modelcontextprotocol/client');
      const iss = outcome.iss === null ? {} : { iss: outcome.iss };
      const result = await auth(flow.provider, { ...flow.authOptions, authorizationCode: outcome.code, ...iss });
      if (result !== 'AUTHORIZED') throw new LoadoutError('AUTH_FAILED', `Authorization of '${flow.server}' did not complete`);
    } catch (error) {
      const failure =
        error instanceof LoadoutError
          ? error
          : new LoadoutError('AUTH_FAILED', `Authorization of '${flow.server}' failed: ${errorMessage(error)}`, { cause: error });
      flow.settle(failure);
      throw failure;
    }
    flow.settle(undefined);
    this.#options.onAuthorized(flow.server, flow.principal);
    return flow.server;
  }

  /** Answer a browser that opened a link (its `state`) with the sign-in page of its flow. */
  answerStart(params: URLSearchParams, response: ServerResponse): void {
    const flow = this.#byState.get(params.get('state') ?? '');
    if (!flow)
      return showOutcome(
        response,
        new LoadoutError('AUTH_FAILED', 'This sign-in link is unknown or has expired; call the tool again for a new link'),
      );
    showSignInPage(response, { server: flow.server, who: flow.who, authorizationUrl: flow.authorizationUrl });
  }

  /** Answer a browser's redirect on `response` with the page that says how it went. */
  async answerRedirect(params: URLSearchParams, response: ServerResponse): Promise<void> {
    try {
      showOutcome(response, await this.complete(params));
    } catch (error) {
      showOutcome(response, error instanceof LoadoutError ? error : new LoadoutError('AUTH_FAILED', errorMessage(error)));
    }
  }

  /** End every pending flow and the loopback listener. */
  async close(): Promise<void> {
    for (const flow of [...this.#byState.values()]) {
      this.#forget(flow);
      flow.settle(new LoadoutError('CLOSED', 'loadout is shutting down'));
    }
    const listener = await this.#loopback?.catch(() => undefined);
    if (!listener) return;
    listener.closeAllConnections();
    await new Promise((resolve) => listener.close(resolve));
  }

  #begin(flow: Omit<Flow, 'link' | 'settle'>, url: string, slot: string): Flow {
    let settle: Flow['settle'] = () => undefined;
    const authorized = new Promise<void>((resolve, reject) => {
      settle = (outcome) => (outcome ? reject(outcome) : resolve());
    });
    // Nobody may be waiting on it (an isError answer's link): a refusal must not go unhandled.
    authorized.catch(() => undefined);
    const timer = setTimeout(() => {
      if (this.#byState.get(flow.state) !== started) return;
      this.#forget(started);
      settle(new LoadoutError('AUTH_FAILED', `The authorization link of '${flow.server}' expired unused`));
    }, FLOW_LIFETIME_MS);
    timer.unref();
    const started: Flow = {
      ...flow,
      link: { url, authorized },
      settle: (outcome) => {
        clearTimeout(timer);
        settle(outcome);
      },
    };
    this.#byState.set(flow.state, started);
    this.#bySlot.set(slot, started);
    return started;
  }

  #forget(flow: Flow): void {
    this.#byState.delete(flow.state);
    this.#bySlot.delete(principalSlot(flow.server, flow.principal));
  }

  // Over stdio loadout has no HTTP server of its own: one loopback listener takes every redirect.
  async #loopbackUrl(): Promise<string> {
    this.#loopback ??= listen(0).then((listener) => {
      listener.on('request', (request: IncomingMessage, response: ServerResponse) => {
        const url = new URL(request.url ?? '/', 'http://127.0.0.1');
        if (url.pathname === AUTHORIZATION_START_PATH) return this.answerStart(url.searchParams, response);
        if (url.pathname !== AUTHORIZATION_CALLBACK_PATH) return void response.writeHead(404).end();
        void this.answerRedirect(url.searchParams, response);
      });
      listener.unref();
      return listener;
    });
    const listener = await this.#loopback;
    return `http://127.0.0.1:${(listener.address() as AddressInfo).port}${AUTHORIZATION_CALLBACK_PATH}`;
  }
}
