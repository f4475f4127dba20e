// The discovery records in the store: one `discovery` record per server that failed (discovery.json
// in files mode). Each server's change is the store's own read-modify-write, so processes and
// replicas recording different servers never overwrite each other.
import type { DiscoveryRecord, LoadoutPaths } from '../config/index.js';
import { openDataDirStore, type RecordCollection, type TeamStore } from '../store/index.js';
import type { DiscoveryRecordsPlace } from './discoveryRecords.js';

/** The records of the team store when there is one, else of the data dir (discovery.json), for a command without a runtime. */
export async function discoveryRecordsOf(
  paths: Pick<LoadoutPaths, 'dataDir' | 'toolsetsDir'>,
  store: TeamStore | undefined,
): Promise<DiscoveryRecordsPlace> {
  return storedDiscoveryRecords((store ?? (await openDataDirStore(paths))).discovery);
}

/** The store's discovery records as a DiscoveryRecordsPlace. */
export function storedDiscoveryRecords(records: RecordCollection<DiscoveryRecord>): DiscoveryRecordsPlace {
  return {
    async read() {
      return Object.fromEntries((await records.list()).map((record) => [record.key, record.value]));
    },
    async get(server) {
      return (await records.get(server))?.value;
    },
    async update(servers, change) {
      // A server with no record that stays without one (a success, most of them) is left alone: no
      // lock taken, nothing written, one keyed read each (not every server's records). A failure
      // another process records meanwhile for such a server stands: the two outcomes were
      // concurrent, and its is kept.
      const recorded = await Promise.all(servers.map(async (server) => (await records.get(server)) !== undefined));
      for (const [index, server] of servers.entries()) {
        if (!recorded[index] && change(server, undefined) === undefined) continue;
        await records.update(server, (record) => change(server, record));
      }
    },
  };
}
