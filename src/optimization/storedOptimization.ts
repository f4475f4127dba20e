// The optimization data in the team store (`--store`): one `optimization` record per server, as
// state.json's `optimization.servers` keeps it. Each change is the store's read-modify-write of
// that server's record, retried on a concurrent write, so replicas and commands changing the same
// server build on each other's changes.
import type { ServerOptimization } from '../config/index.js';
import type { RecordCollection } from '../store/index.js';
import { emptyServer, type OptimizationPlace } from './optimizationStore.js';

/** The store's optimization records as an OptimizationPlace. */
export function storedOptimization(records: RecordCollection<ServerOptimization>): OptimizationPlace {
  return {
    server: async (server) => (await records.get(server))?.value,
    all: async () => Object.fromEntries((await records.list()).map((record) => [record.key, record.value])),
    async update(server, change) {
      const written = await records.update(server, (data) => change(data ?? emptyServer()));
      return written!.value;
    },
  };
}
