// `GET /oauth/callback`: where a principal's browser comes back after they authorized a
// `credentials: per-user` server behind loadout. It needs no token (a browser brings none): the
// redirect's `state` names the one flow it may complete, which is bound to its principal.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AUTHORIZATION_CALLBACK_PATH, type PrincipalAuthorizations } from '../../downstream/index.js';

/** The callback route of an HTTP gateway whose pool's principals authorize per-user servers. */
export interface AuthorizationCallback {
  /** Whether `path` is the callback route (never, without per-user authorizations). */
  at(path: string): boolean;
  /** Complete the flow the browser comes back to, and show how it went. */
  serve(req: IncomingMessage, res: ServerResponse): void;
  /** Send the browser back to this gateway at `baseUrl` (its public URL: the audience when set). */
  redirectTo(baseUrl: string): void;
}

export function authorizationCallback(authorizations: PrincipalAuthorizations | undefined): AuthorizationCallback {
  return {
    at: (path) => authorizations !== undefined && path === AUTHORIZATION_CALLBACK_PATH,
    serve(req, res) {
      if (req.method !== 'GET') return void res.writeHead(405, { allow: 'GET' }).end();
      void authorizations?.answerRedirect(new URL(req.url ?? '/', 'http://localhost').searchParams, res);
    },
    redirectTo: (baseUrl) => authorizations?.redirectTo(new URL(AUTHORIZATION_CALLBACK_PATH, baseUrl).href),
  };
}
