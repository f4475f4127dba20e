// Who an HTTP request comes from. With `auth:` configured, loadout is an OAuth resource server:
// it publishes its protected-resource metadata and checks each request's access token (identity
// layer); the token itself goes no further than that check, never to a server behind loadout.
// Without it, a static --token is its own principal, and no token is the local one. A refusal is
// audited as one.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { AuditEvent, AuditOutcome } from '../../audit/index.js';
import type { AuthSettings } from '../../config/index.js';
import {
  LOCAL_PRINCIPAL,
  bearerChallenge,
  createAccessTokenVerifier,
  protectedResourceMetadata,
  protectedResourcePaths,
  staticTokenPrincipal,
  type Principal,
} from '../../identity/index.js';
import { bearerToken } from './httpGuard.js';

/** A request refused for its credentials: the status, the headers that say why, a one-line reason. */
export interface CredentialRefusal {
  status: 401 | 403 | 503;
  headers: Record<string, string>;
  message: string;
}

/** How one HTTP gateway tells who is calling. */
export interface HttpIdentity {
  /** Whether requests are checked here (auth configured) rather than by the guard's static tokens. */
  readonly checksTokens: boolean;
  /** The protected-resource metadata published at `path`, if it is one of its paths. */
  metadataAt(path: string): Record<string, unknown> | undefined;
  /** The principal of a request the guard let through, or why it is refused. */
  principalOf(headers: IncomingHttpHeaders): Promise<Principal | CredentialRefusal>;
}

/** The identity of requests to the gateway at `serverUrl` (its /mcp URL). */
export function httpIdentity(auth: AuthSettings | undefined, serverUrl: string, tokens: readonly string[]): HttpIdentity {
  if (!auth) {
    // The guard accepts only these tokens: each one's principal is hashed once, not per request.
    const principals = new Map(tokens.map((token) => [token, staticTokenPrincipal(token)]));
    return {
      checksTokens: false,
      metadataAt: () => undefined,
      principalOf: (headers) => {
        const token = principals.size > 0 ? bearerToken(headers.authorization) : undefined;
        return Promise.resolve((token !== undefined && principals.get(token)) || LOCAL_PRINCIPAL);
      },
    };
  }
  const resource = auth.audience ?? serverUrl;
  const verifier = createAccessTokenVerifier(auth, resource);
  const paths = protectedResourcePaths(resource);
  const metadata = protectedResourceMetadata(resource, auth);
  // The public address when an audience is configured (loadout may sit behind a proxy), else its own.
  const metadataUrl = new URL(paths.named, resource).href;
  return {
    checksTokens: true,
    metadataAt: (path) => (paths.all.has(path) ? metadata : undefined),
    async principalOf(headers): Promise<Principal | CredentialRefusal> {
      const token = bearerToken(headers.authorization);
      if (token === undefined) {
        return {
          status: 401,
          headers: { 'WWW-Authenticate': bearerChallenge(metadataUrl) },
          message: `Authorization required: send an access token for ${resource} from ${auth.issuer} (Authorization: Bearer <token>)`,
        };
      }
      const checked = await verifier.verify(token);
      if (checked.ok) return checked.principal;
      return {
        status: checked.status,
        headers: checked.status === 503 ? { 'Retry-After': '5' } : { 'WWW-Authenticate': bearerChallenge(metadataUrl, checked) },
        message: `Access token refused: ${checked.description}`,
      };
    },
  };
}

/** Whether `principalOf` refused the request. */
export function isCredentialRefusal(value: Principal | CredentialRefusal): value is CredentialRefusal {
  return 'status' in value;
}

/**
 * The audit record of a request refused before it was served: for its credentials by default (no
 * principal is known: the token said nothing loadout trusts), or, given `caller`, with its outcome
 * (a 2025-era session another principal started is `denied-session`).
 */
export function refusalAuditEvent(
  req: IncomingMessage,
  path: string,
  refusal: { status: number; message: string },
  startedAt: number,
  caller?: { principal: Principal; outcome: AuditOutcome },
): AuditEvent {
  return {
    startedAt,
    principal: caller?.principal,
    action: 'request',
    method: `${req.method} ${path}`,
    hasArguments: false,
    outcome: caller?.outcome ?? 'denied-authorization',
    durationMs: Date.now() - startedAt,
    detail: `${refusal.status}: ${refusal.message}`,
  };
}
