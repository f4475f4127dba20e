// The files backend of the store: a single user's data dir (and config dir's toolsets) in today's
// formats, byte for byte as their owners write them, behind the same contract as Postgres.
// Revisions come from the data dir's ledger, changes from fs.watch, exclusive work from lock
// files. 2025 sessions stay in this process's memory: in files mode one process serves its own.
import path from 'node:path';
import * as z from 'zod';
import {
  StateStore,
  catalogFileSchema,
  catalogFileText,
  clientsFileText,
  discoveryFileText,
  equippedFileText,
  LearnedWordsFileSchema,
  learnedWordsFileText,
  parseClientsFile,
  parseDiscoveryFile,
  parseToolsetFile,
  readOAuthFile,
  readTextIfExists,
  ToolsetSchema,
  toolsetFileBody,
  toolsetFileText,
  tryWithFileLock,
  writeOAuthFile,
  writeTextAtomic,
  type EquippedRecord,
  type LearnedWordsFile,
  type Toolset,
} from '../config/index.js';
import { LoadoutError, silentLogger, type Logger } from '../shared/index.js';
import { FileCollection, FileOAuthCollection, FileRecords, UnreadableRecord } from './fileCollection.js';
import { documentLayout, fileDirLayout, parseJsonFile, splitLayout, stateLayout, type FileLayout } from './fileLayouts.js';
import { FileWatch } from './fileWatch.js';
import { MemoryCollection } from './memoryCollection.js';
import { DOCUMENT_KINDS, LAST_STOP_KEY, LEARNED_WORDS_KEY, type DocumentKind, type RecordOf } from './records.js';
import { RevisionLedger, type Fingerprints } from './revisionLedger.js';
import type { DocumentCollections, RecordCollection, StoreChange, TeamStore } from './store.js';

/** Where a files store keeps its records. */
export interface FileStoreOptions {
  /** The data dir: catalog.json, discovery.json, learned-words.json, state.json, clients.json, principals/, oauth/. */
  dataDir: string;
  /** Saved toolsets, `<name>.yaml` (the config dir's toolsets/). */
  toolsetsDir: string;
  /** Hear changes, this process's and others' (the default); one-shot commands need not. */
  listen?: boolean;
  /** Read only: writes are refused and nothing is written, not even the revision ledger (e.g. the source of `store import`). */
  readOnly?: boolean;
  /**
   * Keep revisions in this process's memory, not in the data dir's ledger (files mode's own
   * runtime): the data dir holds only the files it always held, and each process numbers the
   * changes it sees (another process's are still told by their content).
   */
  revisionsInMemory?: boolean;
  logger?: Logger;
}

/** Open the files of a data dir as a store; with `listen`, start watching them. */
export async function openFileStore(options: FileStoreOptions): Promise<TeamStore> {
  const store = new FileStore(options);
  if (options.listen ?? true) await store.startWatching(options.logger ?? silentLogger);
  return store;
}

class FileStore implements TeamStore {
  readonly description: string;
  readonly catalog: DocumentCollections['catalog'];
  readonly discovery: DocumentCollections['discovery'];
  readonly toolsets: DocumentCollections['toolsets'];
  readonly equipped: DocumentCollections['equipped'];
  readonly sessions: MemoryCollection<RecordOf<'sessions'>>;
  readonly learnedWords: DocumentCollections['learnedWords'];
  readonly optimization: DocumentCollections['optimization'];
  readonly clients: DocumentCollections['clients'];
  readonly oauth: FileOAuthCollection;
  readonly #dataDir: string;
  readonly #records: Array<FileRecords<unknown, unknown>> = [];
  readonly #listeners = new Set<(change: StoreChange) => void>();
  #watch: FileWatch | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor({ dataDir, toolsetsDir, readOnly = false, revisionsInMemory = false }: FileStoreOptions) {
    this.#dataDir = path.resolve(dataDir);
    this.description = `files in ${this.#dataDir}`;
    const file = (name: string) => path.join(this.#dataDir, name);
    const ledger = new RevisionLedger(this.#dataDir, { readOnly, inMemory: revisionsInMemory });
    const { fingerprints } = ledger;
    const open = (writing: boolean) => {
      if (this.#closed) throw new LoadoutError('CLOSED', `store ${this.description} is closed`);
      if (writing && readOnly) throw new LoadoutError('INVALID_ARGUMENT', `store ${this.description} was opened read-only`);
    };
    // `checkedOnRead`: the layout checks what it reads with the kind's schema itself.
    const collection = <K extends DocumentKind>(
      kind: K,
      layout: FileLayout<unknown, RecordOf<K>>,
      checkedOnRead = false,
    ): RecordCollection<RecordOf<K>> => {
      const records = new FileRecords(kind, layout, ledger, open);
      this.#records.push(records);
      // TypeScript cannot narrow DOCUMENT_KINDS[kind] by a generic key: the cast names the schema's type once.
      const schema = DOCUMENT_KINDS[kind].schema as unknown as z.ZodType<RecordOf<K>>;
      return new FileCollection(records, schema, { asGiven: DOCUMENT_KINDS[kind].asGiven, checkedOnRead });
    };
    const state = new StateStore(file('state.json'));

    this.catalog = collection(
      'catalog',
      documentLayout<unknown, RecordOf<'catalog'>>({
        file: file('catalog.json'),
        parse: (text) => (text === undefined ? {} : catalogServers(text, file('catalog.json'))),
        text: catalogFileText,
        marked: (servers) => fingerprints.readBackAsWritten(servers),
        parseToChange: (text) => {
          try {
            return text === undefined ? {} : catalogServers(text, file('catalog.json'));
          } catch {
            return {};
          }
        },
      }),
    );
    this.discovery = collection(
      'discovery',
      documentLayout<unknown, RecordOf<'discovery'>>({
        file: file('discovery.json'),
        parse: parseDiscoveryFile,
        text: (records) => discoveryFileText(records as Record<string, RecordOf<'discovery'>>),
      }),
    );
    this.clients = collection(
      'clients',
      documentLayout<unknown, RecordOf<'clients'>>({
        file: file('clients.json'),
        parse: parseClientsFile,
        text: (records) => clientsFileText(records as Record<string, RecordOf<'clients'>>),
      }),
    );
    this.learnedWords = collection('learnedWords', learnedWordsLayout(file('learned-words.json'), fingerprints), true);
    this.toolsets = collection('toolsets', toolsetsLayout(toolsetsDir, fingerprints), true);
    // A principal's set in principals/<id>.json; the last stop's in state.json. state.json cannot
    // hold "no record": once it exists, the last stop reads { toolset: null } after a delete.
    this.equipped = collection(
      'equipped',
      splitLayout<unknown, EquippedRecord>(
        {
          key: LAST_STOP_KEY,
          layout: stateLayout<EquippedRecord>({
            store: state,
            file: file('state.json'),
            keys: [LAST_STOP_KEY],
            pick: (current) => ({ [LAST_STOP_KEY]: { toolset: current.activeToolset } }),
            put: (current, _key, value) => ({ ...current, activeToolset: value?.toolset ?? null }),
          }),
        },
        fileDirLayout<unknown, EquippedRecord>({
          dir: file('principals'),
          extension: '.json',
          read: async (principalFile) => {
            const text = await readTextIfExists(principalFile);
            return text === undefined ? undefined : parseJsonFile(text, principalFile);
          },
          write: (principalFile, record) => writeTextAtomic(principalFile, equippedFileText(record)),
        }),
      ),
    );
    this.optimization = collection(
      'optimization',
      stateLayout<RecordOf<'optimization'>>({
        store: state,
        file: file('state.json'),
        pick: (current) => current.optimization.servers,
        put: (current, server, value) => {
          const { [server]: _replaced, ...servers } = current.optimization.servers;
          // Checked by the collection, and again whole by StateStore, which writes it as JSON: read back, it is the same.
          return {
            ...current,
            optimization: {
              ...current.optimization,
              servers: value ? { ...servers, [server]: fingerprints.readBackAsWritten(value) } : servers,
            },
          };
        },
      }) as FileLayout<unknown, RecordOf<'optimization'>>,
      // StateStore checks state.json whole as it reads it.
      true,
    );
    const oauthRecords = new FileRecords(
      'oauth',
      fileDirLayout({ dir: file('oauth'), extension: '.json', read: readOAuthFile, write: writeOAuthFile }),
      ledger,
      open,
    );
    this.#records.push(oauthRecords);
    this.oauth = new FileOAuthCollection(oauthRecords);
    this.sessions = new MemoryCollection(
      'sessions',
      DOCUMENT_KINDS.sessions.schema,
      () => ledger.bump(),
      (change) => this.#emit(change),
    );
  }

  async startWatching(logger: Logger): Promise<void> {
    this.#watch = new FileWatch(this.#records, (change) => this.#emit(change), logger);
    await this.#watch.start();
  }

  get listening(): boolean {
    return this.#watch !== undefined && !this.#closed;
  }

  onChange(listener: (change: StoreChange) => void): () => void {
    if (!this.#watch) throw new LoadoutError('CLOSED', `store ${this.description} was opened without listening for changes`);
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A lock file per name in `<data dir>/locks/`: its holder's process keeps it fresh; one that died leaves it stale after 10 s. */
  runExclusive<T>(name: string, work: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    return tryWithFileLock(path.join(this.#dataDir, 'locks', encodeURIComponent(name)), work);
  }

  async counts(): Promise<Record<DocumentKind | 'oauth', number>> {
    const counts = { sessions: this.sessions.size } as Record<DocumentKind | 'oauth', number>;
    for (const records of this.#records) counts[records.kind] = (await records.layout.readAll()).size;
    return counts;
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    this.#closing ??= this.#watch?.close() ?? Promise.resolve();
    return this.#closing;
  }

  #emit(change: StoreChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}

// catalog.json's entries as written; a file that is not a catalog is one line (it is only a cache: delete it and loadout rediscovers).
function catalogServers(text: string, file: string): Record<string, unknown> {
  const parsed = catalogFileSchema(z.unknown()).safeParse(parseJsonFile(text, file));
  if (!parsed.success) throw new LoadoutError('STATE_INVALID', `${file} is not a valid tool cache; delete it and loadout will rediscover`);
  return parsed.data.servers;
}

/**
 * learned-words.json as loadout has always read it: one document, checked as read, and a file that
 * is not JSON or not a learned-words file reads as none (learned words are a hint, never worth
 * failing for; the next learn replaces it). The text last found valid is not checked again, and the
 * document carries its text's fingerprint, so a learn on a large file costs what it always did.
 */
function learnedWordsLayout(file: string, fingerprints: Fingerprints): FileLayout<unknown, LearnedWordsFile> {
  let validText: string | undefined;
  return documentLayout<unknown, LearnedWordsFile>({
    file,
    keys: [LEARNED_WORDS_KEY],
    parse: (text) => {
      if (text === undefined) return {};
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return {};
      }
      if (text !== validText) {
        if (!LearnedWordsFileSchema.safeParse(json).success) return {};
        validText = text;
      }
      return { [LEARNED_WORDS_KEY]: fingerprints.fromText(json as LearnedWordsFile, text) };
    },
    // The one document gone: the file goes with it.
    text: (records) => {
      if (!Object.hasOwn(records, LEARNED_WORDS_KEY)) return undefined;
      // Checked by the collection before it is written.
      const record = records[LEARNED_WORDS_KEY] as LearnedWordsFile;
      validText = learnedWordsFileText(record);
      fingerprints.fromText(record, validText);
      return validText;
    },
  });
}

/**
 * Saved toolsets, `<name>.yaml`, read fresh on every use (another process, a hand edit or git may
 * have changed one). A file's last parse is kept with its exact text: an unchanged text skips YAML
 * parsing and checking (~10 ms for 1,000 tools), and the toolset, shared by every reader, is
 * frozen. A file that cannot be read is that record's failure, and the others still read.
 */
function toolsetsLayout(dir: string, fingerprints: Fingerprints): FileLayout<unknown, Toolset> {
  const parsed = new Map<string, { text: string; toolset: Toolset | UnreadableRecord }>();
  const remember = (file: string, text: string, toolset: Toolset | UnreadableRecord) => {
    parsed.set(file, { text, toolset: fingerprints.fromText(toolset, text) });
    return toolset;
  };
  const frozen = (toolset: Toolset): Toolset => Object.freeze({ ...toolset, tools: Object.freeze([...toolset.tools]) as string[] });
  return fileDirLayout<unknown, Toolset>({
    dir,
    extension: '.yaml',
    read: async (toolsetFile, key) => {
      const text = await readTextIfExists(toolsetFile);
      if (text === undefined) {
        parsed.delete(toolsetFile);
        return undefined;
      }
      const cached = parsed.get(toolsetFile);
      if (cached?.text === text) return cached.toolset;
      try {
        return remember(toolsetFile, text, frozen(parseToolsetFile(text, toolsetFile, key)));
      } catch (error) {
        return remember(toolsetFile, text, new UnreadableRecord(error as Error));
      }
    },
    write: async (toolsetFile, toolset, key) => {
      // The file's name is the toolset's: a record under another key could never be read back.
      if (toolset.name !== key) throw new LoadoutError('INVALID_ARGUMENT', `toolsets '${key}' not saved: its name is '${toolset.name}'`);
      const text = toolsetFileText(toolset);
      await writeTextAtomic(toolsetFile, text);
      // Read right after (build-toolset equips what it saved): its parse is known.
      remember(toolsetFile, text, frozen(ToolsetSchema.parse(toolsetFileBody(toolset))));
    },
  });
}
