// A replica must outlive a database outage. postgres.js (3.4.9) can leave a connection's failure
// as a promise rejection that nothing holds: under load, stopping Postgres killed a replica with a
// raw `connect ECONNREFUSED` from TCPConnectWrap (every query loadout runs wraps its errors as
// store faults, so this one was the client's own). While a Postgres store is open, such a rejection
// (a connection error naming the store's host and port) is logged and the process goes on; any
// other unhandled rejection stays fatal, as Node makes it.
import type { Logger } from '../shared/index.js';
import { isAwayCode } from './storeFaults.js';
import type { StoreUrl } from './storeUrl.js';

/** Whether `reason` is a lost or refused connection to the store at `url` (its host and port). */
export function isStoreConnectionLoss(reason: unknown, url: Pick<StoreUrl, 'href'>): boolean {
  if (!(reason instanceof Error)) return false;
  const { code, address, port } = reason as Error & { code?: unknown; address?: unknown; port?: unknown };
  if (typeof code !== 'string' || !isAwayCode(code)) return false;
  // postgres.js names the host of every connection error, and its port unless over a Unix socket.
  const store = new URL(url.href);
  const sameHost = address === store.hostname || (store.hostname === 'localhost' && (address === '127.0.0.1' || address === '::1'));
  return sameHost && (port === undefined || Number(port) === Number(store.port || 5432));
}

// The stores open in this process, each with the logger that reports for it; one listener serves them all.
const guarded = new Map<StoreUrl, Logger>();

function onRejection(reason: unknown): void {
  for (const [url, logger] of guarded) {
    if (!isStoreConnectionLoss(reason, url)) continue;
    logger.warn(
      { mod: 'store', store: url.masked, err: (reason as Error).message },
      'a lost store connection went unhandled in the Postgres client; going on',
    );
    return;
  }
  // Anything else is fatal, as it would be with no listener at all.
  throw reason;
}

/** While the store is open: a lost connection's stray rejection is a warning, not the end of the process. Returns how to stop. */
export function guardConnectionLoss(url: StoreUrl, logger: Logger): () => void {
  if (guarded.size === 0) process.on('unhandledRejection', onRejection);
  guarded.set(url, logger);
  return () => {
    guarded.delete(url);
    if (guarded.size === 0) process.off('unhandledRejection', onRejection);
  };
}
