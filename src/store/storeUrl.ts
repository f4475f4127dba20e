// The store URL (`--store postgres://…` / LOADOUT_STORE_URL): parsed once, shown only with its
// password masked, and every connection fault worded as one line naming the URL and the cause.
import { LoadoutError, errorMessage } from '../shared/index.js';

/** A parsed store URL: the text to connect with and the text safe to print. */
export interface StoreUrl {
  readonly href: string;
  /** The URL with its password replaced by `***`: the only form that is logged or shown. */
  readonly masked: string;
}

/** Parse a store URL; anything but a postgres:// or postgresql:// URL is STORE_UNAVAILABLE with one line. */
export function parseStoreUrl(text: string): StoreUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new LoadoutError(
      'STORE_UNAVAILABLE',
      `store URL '${maskLoosely(text)}' is not a URL; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE`,
    );
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new LoadoutError(
      'STORE_UNAVAILABLE',
      `store URL '${maskUrl(url)}' has scheme '${url.protocol.slice(0, -1)}'; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE`,
    );
  }
  if (!url.hostname)
    throw new LoadoutError(
      'STORE_UNAVAILABLE',
      `store URL '${maskUrl(url)}' names no host; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE`,
    );
  if (url.pathname.length <= 1) {
    throw new LoadoutError(
      'STORE_UNAVAILABLE',
      `store URL '${maskUrl(url)}' names no database; add it after the host: postgres://HOST:PORT/DATABASE`,
    );
  }
  return { href: url.href, masked: maskUrl(url) };
}

function maskUrl(url: URL): string {
  if (!url.password) return url.href;
  const copy = new URL(url.href);
  copy.password = '***';
  return copy.href;
}

// A text that does not parse may still hold `user:password@`: mask whatever sits between them.
function maskLoosely(text: string): string {
  return text.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

/** Connection-level faults by Postgres SQLSTATE or Node error code, worded for a person. */
const CAUSES: Record<string, string> = {
  '28P01': 'wrong password for that user',
  '28000': 'the server refused that user (check the user name and pg_hba.conf)',
  '3D000': 'the database does not exist (create it with `createdb`, or fix the name)',
  '57P01': 'the server is shutting down',
  '57P03': 'the server is starting up and not accepting connections yet',
  '53300': 'the server has too many connections',
  '42P01': 'its schema is missing (run `loadout store migrate`)',
  ECONNREFUSED: 'nothing is listening there (is Postgres running?)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve (DNS)',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  CONNECT_TIMEOUT: 'the connection timed out',
  CONNECTION_CLOSED: 'the connection was closed',
  CONNECTION_ENDED: 'the connection was closed',
  CONNECTION_DESTROYED: 'the connection was closed',
};

/** True when `error` says the server could not be reached or refused the connection (not a failed statement). */
export function isConnectionFault(error: unknown): boolean {
  return faultCode(error) in CAUSES;
}

/** One line naming the store and why it failed; `doing` says what was being done ("connect", "save toolset 'x'"). */
export function storeFault(url: StoreUrl, doing: string, error: unknown): LoadoutError {
  if (error instanceof LoadoutError) return error;
  const code = faultCode(error);
  const cause = CAUSES[code] ?? errorMessage(error);
  return new LoadoutError('STORE_UNAVAILABLE', `store ${url.masked}: cannot ${doing}: ${cause}${code in CAUSES ? ` (${code})` : ''}`, {
    cause: error,
  });
}

function faultCode(error: unknown): string {
  if (typeof error !== 'object' || error === null) return '';
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  // postgres.js puts Node's socket code in `code` and the server's SQLSTATE in `code` too; AggregateError wraps both families.
  if (typeof code === 'string' && code) return code;
  if (typeof errno === 'string') return errno;
  const inner = (error as { errors?: unknown[] }).errors?.[0];
  return inner ? faultCode(inner) : '';
}
