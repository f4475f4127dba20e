// A replica must outlive a database outage. postgres.js (3.4.9) can leave a connection's failure
// as a promise rejection that nothing holds: under load, stopping Postgres killed a replica with a
// raw `connect ECONNREFUSED` from TCPConnectWrap (every query loadout runs wraps its errors as
// store faults, so this one was the client's own). While a Postgres store is open, such a rejection
// (a connection error naming the store's host and port) is logged and the process goes on; any
// other unhandled rejection stays fatal, as Node makes it.
import type { Logger } from '../shared/index.js';
import type { StoreUrl } from './storeUrl.js';

// Connection faults, by the code Node's sockets or postgres.js give them.
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/** Whether `reason` is a lost or refused connection to the store at `url`. */
export function isStoreConnectionLoss(reason: unknown, url: Pick<StoreUrl, 'href'>): boolean {
  if (!(reason instanceof Error)) return false;
  const { code, port } = reason as Error & { code?: unknown; port?: unknown };
  if (typeof code !== 'string' || !CONNECTION_CODES.has(code)) return false;
  const storePort = Number(new URL(url.href).port || 5432);
  return port === undefined || Number(port) === storePort;
}

/** While the store is open: a lost connection's stray rejection is a warning, not the end of the process. Returns how to stop. */
export function guardConnectionLoss(url: StoreUrl, logger: Logger): () => void {
  const onRejection = (reason: unknown): void => {
    // Anything else is fatal, as it would be with no listener at all.
    if (!isStoreConnectionLoss(reason, url)) throw reason;
    logger.warn(
      { mod: 'store', store: url.masked, err: (reason as Error).message },
      'a lost store connection went unhandled in the Postgres client; going on',
    );
  };
  process.on('unhandledRejection', onRejection);
  return () => void process.off('unhandledRejection', onRejection);
}
