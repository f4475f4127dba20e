// The store URL (`--store postgres://…` / LOADOUT_STORE_URL): parsed once, shown only with its
// password masked (how a fault is worded is storeFaults.ts's).
import { LoadoutError } from '../shared/index.js';

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
