// The cached definitions in the store (the team store, or files mode's catalog.json): one catalog
// record per server, its tool hashes beside it as catalog.json keeps them. A server's changes are one
// read-modify-write of its record (a listing and the approval after it are one write), so replicas
// changing different servers never overwrite each other, and a concurrent change of one server is
// built on, not replaced.
import { LoadoutError, errorMessage } from '../shared/index.js';
import { dataDirRecords, type CatalogEntryRecord, type RecordCollection } from '../store/index.js';
import {
  entryToKeep,
  keptEntries,
  withoutHashes,
  type CachedServerTools,
  type DefinitionCache,
  type DefinitionChange,
  type DefinitionSource,
  type StoredServerTools,
} from './definitionCache.js';

/** The store's catalog records (files mode: catalog.json's, opened by dataDirRecords) as a DefinitionSource. */
export function storedDefinitions(
  collection: RecordCollection<CatalogEntryRecord> | Promise<RecordCollection<CatalogEntryRecord>>,
): DefinitionSource {
  return {
    async read() {
      const kept = await (await collection).list();
      return keptEntries(Object.fromEntries(kept.map((record) => [record.key, record.value])));
    },
    async update(changes) {
      // Each server's changes in order, as one change of its record: the records change together
      // (files: catalog.json read and written once for the batch).
      const byServer = new Map<string, DefinitionChange['change'][]>();
      for (const { server, change } of changes) byServer.set(server, [...(byServer.get(server) ?? []), change]);
      await (
        await collection
      ).updateAll(
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

/** Read the definitions of a data dir's catalog.json; a missing file is an empty cache, a corrupt one is reported (and rebuilt by discovery). */
export async function readDefinitionCache(file: string): Promise<DefinitionCache> {
  try {
    return await storedDefinitions(dataDirRecords(file, 'catalog')).read();
  } catch (error) {
    throw new LoadoutError(
      'STATE_INVALID',
      `${file} is not a valid tool cache (${errorMessage(error)}); delete it and loadout will rediscover`,
      { cause: error },
    );
  }
}

/** Store (or, with `undefined`, drop) the definitions of some servers in a data dir's catalog.json, keeping the others. */
export function writeDefinitionCache(file: string, entries: Record<string, CachedServerTools | undefined>): Promise<void> {
  return storedDefinitions(dataDirRecords(file, 'catalog')).update(
    Object.entries(entries).map(([server, entry]) => ({ server, change: () => entry })),
  );
}
