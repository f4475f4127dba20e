// The cached definitions in the team store (`--store`): one catalog record per server, its tool
// hashes beside it as catalog.json keeps them. Each change is a read-modify-write of that server's
// record, so replicas changing different servers never overwrite each other, and a concurrent
// change of the same server is built on, not replaced.
import type { CatalogEntryRecord, RecordCollection } from '../store/index.js';
import {
  entryToKeep,
  keptEntries,
  withoutHashes,
  type DefinitionChange,
  type DefinitionSource,
  type StoredServerTools,
} from './definitionCache.js';

/** The store's catalog records as a DefinitionSource. */
export function storedDefinitions(records: RecordCollection<CatalogEntryRecord>): DefinitionSource {
  return {
    async read() {
      const kept = await records.list();
      return keptEntries(Object.fromEntries(kept.map((record) => [record.key, record.value])));
    },
    async update(changes) {
      // Each server's changes in order, as one change of its record: the records change together
      // (files: catalog.json read and written once for the batch).
      const byServer = new Map<string, DefinitionChange['change'][]>();
      for (const { server, change } of changes) byServer.set(server, [...(byServer.get(server) ?? []), change]);
      await records.updateAll(
        new Map(
          [...byServer].map(([server, serverChanges]) => [
            server,
            (current: CatalogEntryRecord | undefined) => {
              // The store checks a record only as deep as it must know it; keptEntries checks the rest on
              // every read. The two types describe one JSON shape (the store's is loose).
              const previous = current as unknown as StoredServerTools | undefined;
              const entry = serverChanges.reduce((next, change) => change(next), previous && withoutHashes(previous));
              return entry && (entryToKeep(previous, entry) as unknown as CatalogEntryRecord);
            },
          ]),
        ),
      );
    },
  };
}
