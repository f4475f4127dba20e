// Checks OAuth 2.1 access tokens (JWTs) as a resource server must: signature against the issuer's
// published keys, `iss`, `exp`/`nbf`, the audience (loadout's own URL, RFC 8707, and nothing
// else), then the required scopes. jose does all the cryptography. Knows nothing of HTTP serving:
// it answers what to tell the caller, and the server says it.
import type { JWTPayload, createRemoteJWKSet } from 'jose';
import * as z from 'zod';
import type { AuthSettings } from '../config/index.js';
import { RecentlyUsed, errorMessage } from '../shared/index.js';
import { issuedPrincipal, type Principal } from './principal.js';

/** The outcome of checking one token: its principal, or the refusal the caller gets. */
export type TokenCheck =
  | { ok: true; principal: Principal; scopes: readonly string[]; expiresAtSeconds: number }
  | { ok: false; status: 401; error: 'invalid_token'; description: string }
  | { ok: false; status: 403; error: 'insufficient_scope'; description: string; scope: string }
  | { ok: false; status: 503; error: 'temporarily_unavailable'; description: string };

/** What checks tokens for one resource. */
export interface AccessTokenVerifier {
  /** The one audience accepted. */
  readonly audience: string;
  verify(token: string): Promise<TokenCheck>;
}

/** Ports a test may replace. */
interface VerifierPorts {
  fetch?: typeof fetch;
  /** Seconds of clock difference allowed on exp/nbf/iat. */
  clockToleranceSeconds?: number;
  now?: () => number;
}

const IssuerMetadataSchema = z.looseObject({ issuer: z.string(), jwks_uri: z.url() });

// jose is read on the first token check, not at every start: most gateways check no tokens.
let joseModule: Promise<typeof import('jose')> | undefined;
const loadJose = (): Promise<typeof import('jose')> => (joseModule ??= import('jose'));

/** Tokens remembered as accepted, until their `exp`: a client sends the same one with every request. */
const ACCEPTED_TOKENS = 1000;

/** A verifier of `settings.issuer`'s tokens for `audience` (loadout's canonical URL). */
export function createAccessTokenVerifier(settings: AuthSettings, audience: string, ports: VerifierPorts = {}): AccessTokenVerifier {
  const fetchImpl = ports.fetch ?? fetch;
  let keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  const keySet = (): Promise<ReturnType<typeof createRemoteJWKSet>> => {
    keys ??= Promise.all([jwksUrl(settings, fetchImpl), loadJose()]).then(([url, jose]) =>
      jose.createRemoteJWKSet(url, { [jose.customFetch]: fetchImpl }),
    );
    // A failed discovery is tried again by the next request, not remembered.
    keys.catch(() => (keys = undefined));
    return keys;
  };

  // Accepted tokens and when each expires (ms): the signature of a token seen before is not checked
  // again (an RSA verification per request), its expiry is. Past the bound the least recently used goes.
  const accepted = new RecentlyUsed<string, { check: TokenCheck; expiresAtMs: number }>(ACCEPTED_TOKENS);
  const now = ports.now ?? Date.now;

  return {
    audience,
    async verify(token) {
      const known = accepted.get(token);
      if (known && now() < known.expiresAtMs) return known.check;
      accepted.delete(token);
      const check = await verifyAnew(token);
      if (check.ok) {
        accepted.set(token, { check, expiresAtMs: check.expiresAtSeconds * 1000 });
      }
      return check;
    },
  };

  async function verifyAnew(token: string): Promise<TokenCheck> {
    let jwks: ReturnType<typeof createRemoteJWKSet>;
    try {
      jwks = await keySet();
    } catch (error) {
      return unavailable(`cannot read the keys of issuer ${settings.issuer}: ${errorMessage(error)}`);
    }
    const { errors, jwtVerify } = await loadJose();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: settings.issuer,
        audience,
        clockTolerance: ports.clockToleranceSeconds ?? 30,
        // exp and nbf are judged by the same clock as the remembered tokens.
        currentDate: new Date(now()),
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      if (error instanceof errors.JWKSTimeout || (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC')) {
        return unavailable(`cannot read the keys of issuer ${settings.issuer}: ${error.message}`);
      }
      return { ok: false, status: 401, error: 'invalid_token', description: refusalText(error, errors) };
    }
    const scopes = scopesOf(payload);
    const missing = settings.scopes.filter((scope) => !scopes.includes(scope));
    if (missing.length > 0) {
      return {
        ok: false,
        status: 403,
        error: 'insufficient_scope',
        description: `the token lacks scope ${missing.join(' ')}`,
        scope: settings.scopes.join(' '),
      };
    }
    const principal = issuedPrincipal(settings.issuer, payload.sub!, groupsOf(payload, settings.groups_claim));
    return { ok: true, principal, scopes, expiresAtSeconds: payload.exp! };
  }
}

// The key set's URL: configured, or named by the issuer's metadata (RFC 8414 first, then OpenID
// discovery), which must name the same issuer (RFC 8414 §3.3).
async function jwksUrl(settings: AuthSettings, fetchImpl: typeof fetch): Promise<URL> {
  if (settings.jwks_uri) return new URL(settings.jwks_uri);
  const issuer = new URL(settings.issuer);
  const path = issuer.pathname.replace(/\/+$/, '');
  const candidates = [
    new URL(`/.well-known/oauth-authorization-server${path}`, issuer),
    new URL(`${path}/.well-known/openid-configuration`, issuer),
  ];
  const problems: string[] = [];
  for (const url of candidates) {
    const response = await fetchImpl(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
    if (!response.ok) {
      problems.push(`${url.href}: HTTP ${response.status}`);
      continue;
    }
    const metadata = IssuerMetadataSchema.parse(await response.json());
    if (metadata.issuer !== settings.issuer) {
      throw new Error(`${url.href} names issuer ${metadata.issuer}, not ${settings.issuer}`);
    }
    return new URL(metadata.jwks_uri);
  }
  throw new Error(`no authorization server metadata (${problems.join('; ')}); set auth.jwks_uri`);
}

// RFC 9068 puts scopes in `scope` (space-separated); some issuers use `scp` (an array).
function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload;
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  if (Array.isArray(scp)) return scp.filter((item): item is string => typeof item === 'string');
  return typeof scp === 'string' ? scp.split(' ').filter(Boolean) : [];
}

/** The groups in `claim` of a token: an array of strings or one space-separated string; a dotted name reaches into objects. */
export function groupsOf(payload: Readonly<Record<string, unknown>>, claim: string): string[] {
  let value: unknown = claim in payload ? payload[claim] : payload;
  if (!(claim in payload)) {
    for (const part of claim.split('.'))
      value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  }
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

// What the caller is told of a refused token: enough to fix it, nothing of the keys.
function refusalText(error: unknown, errors: (typeof import('jose'))['errors']): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `the token's ${error.claim} claim is not accepted here (${error.reason})`;
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) {
    return "the token's signature does not match the issuer's keys";
  }
  return 'the token is not a valid JWT access token';
}

function unavailable(description: string): TokenCheck {
  return { ok: false, status: 503, error: 'temporarily_unavailable', description };
}
