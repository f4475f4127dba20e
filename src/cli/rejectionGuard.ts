// The process's one `unhandledRejection` listener, installed by the CLI (the process's owner) while
// a command has a Postgres store open: a lost store connection that postgres.js leaves unhandled
// is logged, not fatal (store/connectionLossGuard.ts); every other rejection still ends the process.
import { ConnectionLossGuard } from '../store/index.js';

function onRejection(reason: unknown): void {
  // Anything else is fatal, as it would be with no listener at all.
  if (!storeConnectionLoss.absorbs(reason)) throw reason;
}

/** The guard every store a command opens is watched by; the listener is on while one is open. */
export const storeConnectionLoss = new ConnectionLossGuard((watching) => {
  if (watching) process.on('unhandledRejection', onRejection);
  else process.off('unhandledRejection', onRejection);
});
