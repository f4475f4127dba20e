// `loadout store import` and `export`: a copy between two stores, kind by kind. Import copies a
// data dir's files store into the team store; export copies the team store into a files store on
// a new dir, so an exported data dir is what the files' owners would have written (byte for byte
// where they wrote it). Everything is read before anything is written: a fault or a missing key
// leaves nothing half-copied.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { DOCUMENT_KINDS, REVISION_LEDGER_FILE, type DocumentKind, type RecordCollection, type TeamStore } from '../store/index.js';

/** What a transfer copied, per kind, and what it left alone with why. */
export interface TransferReport {
  counts: Partial<Record<DocumentKind | 'oauth', number>>;
  skipped: Array<{ file: string; reason: string }>;
}

/** The kinds in the order a report lists them. */
export const TRANSFER_KINDS: Array<DocumentKind | 'oauth'> = [...(Object.keys(DOCUMENT_KINDS) as DocumentKind[]), 'oauth'];

// 2025 sessions are the live state of running replicas (files mode keeps them in memory): never moved.
const COPIED_KINDS = (Object.keys(DOCUMENT_KINDS) as DocumentKind[]).filter((kind) => kind !== 'sessions');

// Files of a data dir the store does not hold: caches rebuilt from what it does hold, or this machine's own.
const NOT_STORED: Record<string, string> = {
  'server-map.json': 'a cache of the catalog, rebuilt from it',
  'search-index.bin': 'a cache of the search index, rebuilt from the catalog',
  'servers.parsed.json': "a cache of servers.yaml's parse",
  'embeddings-cache.json': 'a cache, rebuilt from the catalog',
  'example-requests.json': 'not held by the store yet',
  'config-dir': "this machine's claim on the data dir",
  [REVISION_LEDGER_FILE]: "the files store's own revisions (the target keeps its own)",
};

/** Copy every record of `from` into `to` (OAuth tokens `from` cannot read are skipped, each with why); `fileOf` names an OAuth record in messages. */
export async function copyStore(from: TeamStore, to: TeamStore, fileOf: (server: string) => string): Promise<TransferReport> {
  const report: TransferReport = { counts: {}, skipped: [] };
  const records = await Promise.all(COPIED_KINDS.map(async (kind) => ({ kind, records: await from[kind].list() })));
  const oauth = await from.oauth.list();
  for (const { kind, records: list } of records) {
    // All of a kind at once: the files store writes a document file (catalog.json…) once, not once per record.
    await (to[kind] as RecordCollection<unknown>).putAll(list);
    if (list.length) report.counts[kind] = list.length;
  }
  for (const record of oauth) {
    if (record.state === 'unreadable') {
      report.skipped.push({ file: fileOf(record.key), reason: record.reason });
      continue;
    }
    await to.oauth.put(record.key, record.value);
    report.counts.oauth = (report.counts.oauth ?? 0) + 1;
  }
  return report;
}

/** The files of `dataDir` a copy leaves alone, each with why. */
export async function filesNotStored(dataDir: string): Promise<TransferReport['skipped']> {
  const skipped: TransferReport['skipped'] = [];
  for (const [name, reason] of Object.entries(NOT_STORED)) {
    const file = path.join(dataDir, name);
    // Only whether it is there: some are large, one is binary.
    if (
      await stat(file).then(
        () => true,
        () => false,
      )
    )
      skipped.push({ file, reason });
  }
  return skipped;
}
