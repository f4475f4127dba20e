// Turns what happens to downstream servers into what sessions hear: a crash or a restart, and a
// tool that changed upstream since it was approved, become notifications/message (logger
// "loadout") to the sessions using that server; a restart re-establishes subscriptions and
// logging levels (SessionHub), and a server that crashed while it had subscriptions is started
// again on its own, with backoff, so their updates resume without waiting for a call. Downstream log messages and resource updates go to the hub; a
// prompts or resources list_changed re-lists that server into the catalog, and each session then
// announces its own list_changed if what it lists changed.
import type { CatalogStore } from '../catalog/index.js';
import type { ServerPool } from '../downstream/index.js';
import { BackoffTimers, errorMessage, type Logger } from '../shared/index.js';
import type { SessionHub } from './sessionHub.js';

const RELIST_ON = new Set(['notifications/prompts/list_changed', 'notifications/resources/list_changed']);

/** First and longest wait before a crashed server with subscriptions is started again. */
export interface RestartDelays {
  baseMs: number;
  maxMs: number;
}

/** Watch the pool and the catalog on behalf of the sessions; returns the function that stops watching. */
export function watchServerEvents(
  pool: ServerPool,
  catalog: CatalogStore,
  hub: SessionHub,
  logger: Logger,
  restartDelays: RestartDelays,
): () => void {
  const lost = new Set<string>();
  const restarts = new BackoffTimers(restartDelays.baseMs, restartDelays.maxMs);
  // Returns whether `server` will be started again without waiting for a use.
  const restartForSubscriptions = (server: string): boolean => {
    // A server removed from or disabled in servers.yaml is not started again, subscriptions or not.
    if (!hub.hasSubscriptions(server) || !pool.config(server)?.enabled) return false;
    restarts.schedule(server, () => {
      if (!hub.hasSubscriptions(server) || !pool.config(server)?.enabled || pool.isConnected(server)) return;
      pool.connection(server).catch((error: unknown) => {
        logger.warn({ mod: 'gateway', server, err: errorMessage(error) }, 'could not start again a server with resource subscriptions');
        restartForSubscriptions(server);
      });
    });
    return true;
  };
  // The first catalog is the cache being read: what was already changed then is not news.
  let changedTools: Map<string, string> | undefined;
  const stopPool = pool.onEvent((event) => {
    if (event.type === 'lost') {
      lost.add(event.server);
      const when = restartForSubscriptions(event.server) ? 'now, for its resource subscriptions' : 'on next use';
      hub.announce(
        event.server,
        'error',
        `Server '${event.server}' stopped unexpectedly (crashed or closed its connection); loadout starts it again ${when}.`,
      );
    } else if (event.type === 'connected') {
      restarts.reset(event.server);
      if (lost.delete(event.server)) hub.announce(event.server, 'notice', `Server '${event.server}' is running again.`);
      void hub.onServerConnected(event.server);
    } else if (event.type === 'notification') {
      if (RELIST_ON.has(event.notification.method)) {
        catalog
          .recheck(event.server, { changed: true })
          .catch((error: unknown) =>
            logger.warn({ mod: 'gateway', server: event.server, err: errorMessage(error) }, 're-listing after list_changed failed'),
          );
      } else {
        hub.onServerNotification(event.server, event.notification);
      }
    }
  });
  const stopCatalog = catalog.onChange(() => {
    const now = changedToolIds(catalog);
    for (const [id, server] of changedTools ? now : []) {
      if (!changedTools!.has(id))
        hub.announce(
          server,
          'warning',
          `Tool ${id} changed upstream since it was approved; review it with \`loadout refresh --accept-changed\`.`,
        );
    }
    changedTools = now;
  });
  return () => {
    stopPool();
    stopCatalog();
    restarts.clearAll();
  };
}

function changedToolIds(catalog: CatalogStore): Map<string, string> {
  const changed = new Map<string, string>();
  for (const server of catalog.current.servers()) {
    for (const tool of catalog.current.definitionsOf(server)?.tools ?? []) {
      const entry = catalog.current.get(`${server}.${tool.name}`);
      if (entry?.changed) changed.set(entry.id, server);
    }
  }
  return changed;
}
