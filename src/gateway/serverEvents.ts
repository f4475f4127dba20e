// Turns what happens to downstream servers into what sessions hear: a crash or a restart, and a
// tool that changed upstream since it was approved, become notifications/message (logger
// "loadout") to the sessions using that server; a restart re-establishes subscriptions and
// logging levels (SessionHub).
import type { CatalogStore } from '../catalog/index.js';
import type { ServerPool } from '../downstream/index.js';
import type { SessionHub } from './sessionHub.js';

/** Watch the pool and the catalog on behalf of the sessions; returns the function that stops watching. */
export function watchServerEvents(pool: ServerPool, catalog: CatalogStore, hub: SessionHub): () => void {
  const lost = new Set<string>();
  let changedTools = changedToolIds(catalog);
  const stopPool = pool.onEvent((event) => {
    if (event.type === 'lost') {
      lost.add(event.server);
      hub.announce(event.server, 'error', `Server '${event.server}' stopped unexpectedly (crashed or closed its connection); loadout starts it again on next use.`);
    } else if (event.type === 'connected') {
      if (lost.delete(event.server)) hub.announce(event.server, 'notice', `Server '${event.server}' is running again.`);
      void hub.onServerConnected(event.server);
    }
  });
  const stopCatalog = catalog.onChange(() => {
    const now = changedToolIds(catalog);
    for (const [id, server] of now) {
      if (!changedTools.has(id)) hub.announce(server, 'warning', `Tool ${id} changed upstream since it was approved; review it with \`loadout refresh --accept-changed\`.`);
    }
    changedTools = now;
  });
  return () => {
    stopPool();
    stopCatalog();
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
