// Opening the Postgres backend with its client (postgres.js), change bus and tables loaded on
// first use: a files-mode start (every single-user `serve`) never parses them.
import type { PostgresStoreOptions } from './postgresStore.js';
import type { FleetStore } from './store.js';

/** Connect, check or migrate the schema, and start listening (see postgresStore.ts); the backend's code is loaded on this first call. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<FleetStore> {
  const backend = await import('./postgresStore.js');
  return backend.openPostgresStore(options);
}
