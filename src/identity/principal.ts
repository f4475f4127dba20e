// Who is calling: a principal is an (issuer, subject) pair, with the groups its token names. Its
// id keys everything loadout keeps per caller (equipped sets, learned words); the id is a hash,
// so no file name carries a subject, a token or an e-mail address.
import { createHash } from 'node:crypto';

/** A caller loadout knows by name. */
export interface Principal {
  /** Stable key of (issuer, subject): 32 hex digits, or `local` for the one caller of an open gateway. */
  readonly id: string;
  /** Who vouches for the subject: a token issuer's URL, `token` for a static --token, `local` otherwise. */
  readonly issuer: string;
  readonly subject: string;
  /** The groups the issuer put in the configured claim (none for static tokens and `local`). */
  readonly groups: readonly string[];
}

/** Issuer of the principals static --tokens stand for. */
export const STATIC_TOKEN_ISSUER = 'token';

/** The caller of a gateway that asks for no token (stdio, or HTTP without --token or auth). */
export const LOCAL_PRINCIPAL: Principal = { id: 'local', issuer: 'local', subject: 'local', groups: [] };

/** The principal an issuer's subject is. */
export function issuedPrincipal(issuer: string, subject: string, groups: readonly string[]): Principal {
  return { id: digest(`${issuer}\n${subject}`), issuer, subject, groups };
}

/**
 * The principal a static bearer token stands for. Its id is the token's hash, as it was before
 * principals had issuers, so equipped sets recorded under it stay theirs.
 */
export function staticTokenPrincipal(token: string): Principal {
  const id = digest(token);
  return { id, issuer: STATIC_TOKEN_ISSUER, subject: id, groups: [] };
}

function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);
}
