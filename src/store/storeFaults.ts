// The one place a store fault is worded and classed: by the Postgres SQLSTATE or the Node socket
// code it carries (never its message text), as one line naming the store, what was being done and
// the cause; and whether it means the store is away (unreachable, shutting down, restarting), which
// a replica outlives on its local copy, rather than a statement that failed.
import { LoadoutError, errorMessage } from '../shared/index.js';
import type { StoreUrl } from './storeUrl.js';

/** Faults that mean the store is away for now: nothing listens, the connection was lost, the server is stopping or restarting. */
const AWAY: Record<string, string> = {
  // Class 57, operator intervention. Postgres answers 57P03 (cannot_connect_now) while it starts,
  // while it shuts down and while it recovers; only the message text tells which, so the wording
  // names all three.
  '57P01': 'the server is shutting down (admin shutdown)',
  '57P02': 'the server crashed and is restarting (crash shutdown)',
  '57P03': 'the server is not accepting connections now (starting up, shutting down or recovering)',
  // Class 08, connection exception.
  '08000': 'the connection failed',
  '08001': 'the server could not be reached to open a connection',
  '08003': 'the connection does not exist',
  '08006': 'the connection failed',
  ECONNREFUSED: 'nothing is listening there (is Postgres running?)',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EAI_AGAIN: 'the host name does not resolve (DNS)',
  CONNECT_TIMEOUT: 'the connection timed out',
  CONNECTION_CLOSED: 'the connection was closed',
  CONNECTION_ENDED: 'the connection was closed',
  CONNECTION_DESTROYED: 'the connection was closed',
};

/** Faults a person must fix (credentials, names, schema, limits): the store answered, and will answer so again. */
const REFUSED: Record<string, string> = {
  '28P01': 'wrong password for that user',
  '28000': 'the server refused that user (check the user name and pg_hba.conf)',
  '3D000': 'the database does not exist (create it with `createdb`, or fix the name)',
  '53300': 'the server has too many connections',
  '42P01': 'its schema is missing (run `loadout store migrate`)',
  ENOTFOUND: 'the host name does not resolve',
};

/** The code a fault carries: a SQLSTATE, a Node socket code or a postgres.js code ('' when none). */
export function faultCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return '';
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  // postgres.js puts Node's socket code in `code` and the server's SQLSTATE in `code` too; AggregateError wraps both families.
  if (typeof code === 'string' && code) return code;
  if (typeof errno === 'string') return errno;
  const inner = (error as { errors?: unknown[] }).errors?.[0];
  return inner ? faultCode(inner) : '';
}

/** Whether `code` (a SQLSTATE or socket code) means the store is away for now. */
export function isAwayCode(code: string): boolean {
  return code in AWAY;
}

/** The cause of a fault in a person's words, by its code; undefined for a code not known here. */
export function faultCause(code: string): string | undefined {
  return AWAY[code] ?? REFUSED[code];
}

/**
 * True when `error` is a store fault (storeFault's, wrapped by higher layers or not) that means the
 * store is away for now, not that a statement failed. A downstream server's refused connection is
 * not the store's: only what storeFault made counts.
 */
export function isStoreAway(error: unknown): boolean {
  let fault = error;
  for (let depth = 0; fault instanceof LoadoutError && depth < 8; depth++) {
    if (fault.code === 'STORE_UNAVAILABLE') return isAwayCode(faultCode(fault.cause));
    fault = fault.cause;
  }
  return false;
}

/** One line naming the store and why it failed; `doing` says what was being done ("connect", "save toolset 'x'"). */
export function storeFault(url: StoreUrl, doing: string, error: unknown): LoadoutError {
  if (error instanceof LoadoutError) return error;
  const code = faultCode(error);
  const cause = faultCause(code);
  return new LoadoutError(
    'STORE_UNAVAILABLE',
    `store ${url.masked}: cannot ${doing}: ${cause ? `${cause} (${code})` : errorMessage(error)}`,
    {
      cause: error,
    },
  );
}
