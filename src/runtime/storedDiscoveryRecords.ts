// The discovery records in the team store (`--store`): one `discovery` record per server that
// failed, as discovery.json keeps it. Each server's change is the store's own read-modify-write,
// so replicas recording different servers never overwrite each other. discoveryRecordsOf picks
// between it and discovery.json.
import type { DiscoveryRecord, LoadoutPaths } from '../config/index.js';
import type { RecordCollection, TeamStore } from '../store/index.js';
import { discoveryFile, discoveryRecordsFile, type DiscoveryRecordsPlace } from './discoveryRecords.js';

/** Where the records are kept: the team store's when there is one, else the data dir's discovery.json. */
export function discoveryRecordsOf(paths: Pick<LoadoutPaths, 'dataDir'>, store: TeamStore | undefined): DiscoveryRecordsPlace {
  return store ? storedDiscoveryRecords(store.discovery) : discoveryFile(discoveryRecordsFile(paths));
}

/** The store's discovery records as a DiscoveryRecordsPlace. */
export function storedDiscoveryRecords(records: RecordCollection<DiscoveryRecord>): DiscoveryRecordsPlace {
  return {
    async read() {
      return Object.fromEntries((await records.list()).map((record) => [record.key, record.value]));
    },
    async update(servers, change) {
      for (const server of servers) await records.update(server, (record) => change(server, record));
    },
  };
}
