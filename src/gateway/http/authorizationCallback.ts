// `GET /oauth/sign-in` and `GET /oauth/callback`: where a principal's browser opens their sign-in
// link to a `credentials: per-user` server behind loadout (a page saying whose sign-in it is,
// leading on to the server's authorization page), and where it comes back after they authorized.
// Neither needs a token (a browser brings none): the link's `state` names the one flow it may
// complete, which is bound to its principal.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AUTHORIZATION_CALLBACK_PATH, AUTHORIZATION_START_PATH, type PrincipalAuthorizations } from '../../downstream/index.js';

/** The sign-in routes of an HTTP gateway whose pool's principals authorize per-user servers. */
export interface AuthorizationCallback {
  /** Whether `path` is one of the sign-in routes (never, without per-user authorizations). */
  at(path: string): boolean;
  /** Show a link's sign-in page, or complete the flow the browser comes back to and show how it went. */
  serve(req: IncomingMessage, res: ServerResponse): void;
  /** Send the browser back to this gateway at `baseUrl` (its public URL: the audience when set). */
  redirectTo(baseUrl: string): void;
}

export function authorizationCallback(authorizations: PrincipalAuthorizations | undefined): AuthorizationCallback {
  return {
    at: (path) => authorizations !== undefined && (path === AUTHORIZATION_CALLBACK_PATH || path === AUTHORIZATION_START_PATH),
    serve(req, res) {
      if (req.method !== 'GET') return void res.writeHead(405, { allow: 'GET' }).end();
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === AUTHORIZATION_START_PATH) return authorizations?.answerStart(url.searchParams, res);
      void authorizations?.answerRedirect(url.searchParams, res);
    },
    redirectTo: (baseUrl) => authorizations?.redirectTo(new URL(AUTHORIZATION_CALLBACK_PATH, baseUrl).href),
  };
}
