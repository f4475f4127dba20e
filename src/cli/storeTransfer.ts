// `loadout store import` and `export`: a single user's files moved into the team store and written
// back out in today's formats, read and written with the modules that own each file, so an
// exported data dir is what those modules would have written (byte for byte where they wrote it).
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { StateStore, readOAuthRecord, readTextIfExists, updateOAuthRecord, writeTextAtomic } from '../config/index.js';
import { readDefinitionCache } from '../catalog/index.js';
import { LoadoutError, errorMessage } from '../shared/index.js';
import {
  DOCUMENT_KINDS,
  LAST_STOP_KEY,
  LEARNED_WORDS_KEY,
  type DocumentKind,
  type RecordCollection,
  type TeamStore,
} from '../store/index.js';
import { readAllDiscoveryRecords } from '../runtime/index.js';
import { ToolsetStore } from '../toolsets/index.js';

/** What a transfer moved, per kind, and the files it left alone with why. */
export interface TransferReport {
  counts: Partial<Record<DocumentKind | 'oauth', number>>;
  skipped: Array<{ file: string; reason: string }>;
}

// Files of a data dir the store does not hold: caches rebuilt from what it does hold, or this machine's own.
const NOT_STORED: Record<string, string> = {
  'server-map.json': 'a cache of the catalog, rebuilt from it',
  'servers.parsed.json': "a cache of servers.yaml's parse",
  'embeddings-cache.json': 'a cache, rebuilt from the catalog',
  'example-requests.json': 'not held by the store yet',
  'config-dir': "this machine's claim on the data dir",
};

/** Move the files of `dataDir` (and the saved toolsets in `toolsetsDir`) into `store`. */
export async function importDataDir(store: TeamStore, dataDir: string, toolsetsDir: string): Promise<TransferReport> {
  const report: TransferReport = { counts: {}, skipped: [] };
  const count = (kind: DocumentKind | 'oauth') => (report.counts[kind] = (report.counts[kind] ?? 0) + 1);
  const file = (name: string) => path.join(dataDir, name);

  // catalog.json: read through the catalog's own reader (it refuses a corrupt cache), stored as
  // written, tool fingerprints (`hashes`) included.
  await readDefinitionCache(file('catalog.json'));
  const catalogText = await readTextIfExists(file('catalog.json'));
  if (catalogText !== undefined) {
    const { servers } = JSON.parse(catalogText) as { servers: Record<string, unknown> };
    for (const [server, entry] of Object.entries(servers)) await putParsed(store.catalog, server, entry).then(() => count('catalog'));
  }
  // Read as the runtime reads it: a version 1 file comes upgraded (each failure given its code).
  for (const [server, record] of Object.entries(await readAllDiscoveryRecords(file('discovery.json')))) {
    await putParsed(store.discovery, server, record).then(() => count('discovery'));
  }
  const learned = await readJson(file('learned-words.json'));
  if (learned !== undefined) await putParsed(store.learnedWords, LEARNED_WORDS_KEY, learned).then(() => count('learnedWords'));

  if ((await readTextIfExists(file('state.json'))) !== undefined) {
    const state = await new StateStore(file('state.json')).read();
    await store.equipped.put(LAST_STOP_KEY, { toolset: state.activeToolset }).then(() => count('equipped'));
    for (const [server, data] of Object.entries(state.optimization.servers)) {
      await store.optimization.put(server, data).then(() => count('optimization'));
    }
  }
  for (const name of await jsonFilesIn(file('principals'))) {
    const record = await readJson(path.join(file('principals'), name));
    await putParsed(store.equipped, name.slice(0, -'.json'.length), record).then(() => count('equipped'));
  }
  for (const name of await jsonFilesIn(file('oauth'))) {
    const oauthFile = path.join(file('oauth'), name);
    const record = await readOAuthRecord(oauthFile);
    if (!record) {
      report.skipped.push({ file: oauthFile, reason: 'not a readable OAuth record' });
      continue;
    }
    await store.oauth.put(name.slice(0, -'.json'.length), record).then(() => count('oauth'));
  }
  const { toolsets, problems } = await new ToolsetStore(toolsetsDir).list();
  for (const toolset of toolsets) await store.toolsets.put(toolset.name, toolset).then(() => count('toolsets'));
  for (const problem of problems) report.skipped.push({ file: problem.file, reason: problem.error });
  for (const [name, reason] of Object.entries(NOT_STORED)) {
    if ((await readTextIfExists(file(name))) !== undefined) report.skipped.push({ file: file(name), reason });
  }
  return report;
}

/** Write what `store` holds into `dir` as a data dir, saved toolsets in `dir/toolsets/`. */
export async function exportDataDir(store: TeamStore, dir: string): Promise<TransferReport> {
  const report: TransferReport = { counts: {}, skipped: [] };
  const file = (name: string) => path.join(dir, name);
  // Everything is read before anything is written: a store fault or a missing key leaves no half-written dir.
  const [catalog, discovery, learned, equipped, optimization, oauth, toolsetRecords] = await Promise.all([
    store.catalog.list(),
    store.discovery.list(),
    store.learnedWords.get(LEARNED_WORDS_KEY),
    store.equipped.list(),
    store.optimization.list(),
    store.oauth.list(),
    store.toolsets.list(),
  ]);
  await mkdir(dir, { recursive: true });

  if (catalog.length) {
    // As catalog/definitionCache.ts writes it: compact JSON, no newline.
    await writeTextAtomic(file('catalog.json'), JSON.stringify({ version: 1, servers: byKey(catalog) }));
    report.counts.catalog = catalog.length;
  }
  if (discovery.length) {
    // As runtime/discoveryRecords.ts writes it.
    await writeTextAtomic(file('discovery.json'), `${JSON.stringify({ version: 2, servers: byKey(discovery) }, null, 2)}\n`);
    report.counts.discovery = discovery.length;
  }
  if (learned) {
    // As catalog/learnedWords.ts writes it.
    await writeTextAtomic(file('learned-words.json'), `${JSON.stringify(learned.value)}\n`);
    report.counts.learnedWords = 1;
  }
  const lastStop = equipped.find((record) => record.key === LAST_STOP_KEY);
  if (lastStop || optimization.length) {
    await new StateStore(file('state.json')).update((state) => ({
      ...state,
      activeToolset: lastStop?.value.toolset ?? null,
      optimization: { servers: byKey(optimization) },
    }));
    report.counts.optimization = optimization.length;
  }
  const principals = equipped.filter((record) => record.key !== LAST_STOP_KEY);
  if (principals.length) await mkdir(file('principals'), { recursive: true });
  for (const principal of principals) {
    // As gateway/principalToolsets.ts writes it.
    await writeTextAtomic(path.join(file('principals'), `${principal.key}.json`), `${JSON.stringify(principal.value)}\n`);
  }
  report.counts.equipped = equipped.length;
  for (const record of oauth) {
    if (record.state === 'unreadable') {
      report.skipped.push({ file: path.join(file('oauth'), `${record.key}.json`), reason: record.reason });
      continue;
    }
    await updateOAuthRecord(path.join(file('oauth'), `${record.key}.json`), record.value.serverUrl, () => record.value);
    report.counts.oauth = (report.counts.oauth ?? 0) + 1;
  }
  const toolsets = new ToolsetStore(file('toolsets'));
  for (const { value } of toolsetRecords) await toolsets.save(value);
  report.counts.toolsets = toolsetRecords.length;
  return report;
}

/** The kinds in the order a report lists them. */
export const TRANSFER_KINDS: Array<DocumentKind | 'oauth'> = [...(Object.keys(DOCUMENT_KINDS) as DocumentKind[]), 'oauth'];

async function putParsed<T>(collection: RecordCollection<T>, key: string, value: unknown): Promise<void> {
  // The collection validates with its schema: a record that does not fit is refused with one line.
  await collection.put(key, value as T);
}

function byKey<T>(records: ReadonlyArray<{ key: string; value: T }>): Record<string, T> {
  return Object.fromEntries(records.map((record) => [record.key, record.value]));
}

async function readJson(file: string): Promise<unknown> {
  const text = await readTextIfExists(file);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new LoadoutError('STATE_INVALID', `${file} is not valid JSON (${errorMessage(error)}); fix or delete it, then import again`);
  }
}

async function jsonFilesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => name.endsWith('.json')).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
