// A replica must outlive a database outage. postgres.js (3.4.9) can leave a connection's failure
// as a promise rejection that nothing holds: under load, stopping Postgres killed a replica with a
// raw `connect ECONNREFUSED` from TCPConnectWrap (every query loadout runs wraps its errors as
// store faults, so this one was the client's own). While a Postgres store is open, such a rejection
// (a connection error naming the store's host and port) is logged and the process goes on; any
// other unhandled rejection stays fatal, as Node makes it. The process hook is the CLI's.
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

/**
 * The stores a process has open, each with the logger that reports for it: what tells their lost
 * connections' stray rejections apart from any other. It holds no process hook: the command that
 * opens the stores installs the one listener (cli/rejectionGuard.ts), told when the first store is
 * watched and when the last goes (`onWatching`).
 */
export class ConnectionLossGuard {
  readonly #watched = new Map<StoreUrl, Logger>();

  constructor(private readonly onWatching: (watching: boolean) => void = () => undefined) {}

  /** While the store at `url` is open: its lost connection's stray rejection is a warning. Returns how to stop. */
  watch(url: StoreUrl, logger: Logger): () => void {
    this.#watched.set(url, logger);
    if (this.#watched.size === 1) this.onWatching(true);
    return () => {
      if (!this.#watched.delete(url)) return;
      if (this.#watched.size === 0) this.onWatching(false);
    };
  }

  /** Whether `reason` is a watched store's lost connection, logged as a warning; anything else is the caller's to keep fatal. */
  absorbs(reason: unknown): boolean {
    for (const [url, logger] of this.#watched) {
      if (!isStoreConnectionLoss(reason, url)) continue;
      logger.warn(
        { mod: 'store', store: url.masked, err: (reason as Error).message },
        'a lost store connection went unhandled in the Postgres client; going on',
      );
      return true;
    }
    return false;
  }
}
