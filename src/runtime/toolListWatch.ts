// Keeps the catalog current for downstream servers whose tool list changes while they run: on a
// server's notifications/tools/list_changed, re-list its tools and store them (only them: the
// catalog keeps the server's other lists). Each session then rebuilds from the new catalog and
// announces one list_changed only if its exposed tools changed.
import type { CatalogStore } from '../catalog/index.js';
import type { ServerPool } from '../downstream/index.js';
import { errorMessage, type Logger } from '../shared/index.js';

/** Re-list a server's tools whenever it says they changed; returns the function that stops watching. */
export function watchToolListChanges(pool: ServerPool, catalog: CatalogStore, logger: Logger): () => void {
  const running = new Set<string>();
  const pending = new Set<string>();

  // One re-list per server at a time; a notification arriving meanwhile causes exactly one more.
  const relist = async (server: string): Promise<void> => {
    running.add(server);
    try {
      do {
        pending.delete(server);
        // A stopped server is not restarted just to re-list; its next start or discovery will.
        if (!pool.isConnected(server)) return;
        const tools = await catalog.relistTools(server);
        logger.info({ mod: 'gateway', server, tools }, 'server tool list changed; catalog updated');
      } while (pending.has(server));
    } catch (error) {
      logger.warn({ mod: 'gateway', server, err: errorMessage(error) }, 're-listing tools after list_changed failed');
    } finally {
      running.delete(server);
    }
  };

  return pool.onEvent((event) => {
    if (event.type !== 'tools-changed') return;
    if (running.has(event.server)) pending.add(event.server);
    else void relist(event.server);
  });
}
