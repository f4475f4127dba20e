// Holds the current Catalog and replaces it when its sources change: discovery results, a
// servers.yaml reload, a promoted description. Listeners hear about each new catalog. It owns
// loading too: the cached definitions are read on first need (what to discover, and when, is the
// gateway's business). The server configs it builds from are the pool's (their one owner); a change of
// them reaches this store as the pool's 'configured' event. Listing servers (discovery, re-checks)
// is catalogDiscovery.ts's; the store answers for it.
import path from 'node:path';
import * as z from 'zod';
import {
  enabledServerNames,
  fileStamp,
  readTextIfExists,
  serverProblems,
  writeTextAtomic,
  type EmbeddingsSettings,
  type ServerConfig,
  type ServerProblem,
  type ServersFileProblem,
} from '../config/index.js';
import { WorkInFlight, errorMessage, type Failure } from '../shared/index.js';
import type { LearnedWordsFile } from '../config/index.js';
import { dataDirRecords, type CatalogEntryRecord, type RecordCollection } from '../store/index.js';
import { Catalog } from './catalog.js';
import { CatalogDiscovery, type DiscoverOptions, type DiscoveryResult, type DiscoverySources } from './catalogDiscovery.js';
import { DefinitionStore } from './definitionStore.js';
import { storedDefinitions } from './storedDefinitions.js';
import { EmbeddingRanking } from './embeddingRanking.js';
import { LearnedWordsStore, type LearnedSearch } from './learnedWords.js';
import { SearchLearning } from './searchLearning.js';
import { SearchIndexFile } from './searchIndexFile.js';
import { ExampleRequestsStore } from './exampleRequests.js';
import { examplesByTool, keywordsOf, readSynonyms } from './searchVocabulary.js';
import type { ServerMapEntry, ServerState, ServerSummary } from './serverMap.js';

// The map's summaries as kept in the data dir: read before the catalog itself, so the first
// answer of a session (its instructions) can name the servers without parsing every definition.
const ServerSummariesFileSchema = z.object({
  version: z.literal(1),
  servers: z.array(z.object({ server: z.string(), purpose: z.string(), tools: z.number() })),
});

// The summaries file is kept in step a while after a change, not at it: summarizing every server
// took ~25 ms of a warm start over 2,500 tools (docs/performance.md), before its first answer, and
// a burst of changes (a discovery of many servers) is summarized once, for its last catalog.
const KEEP_SUMMARIES_AFTER_MS = 1000;

/** Where the cached definitions are kept: catalog.json, or (in store mode) the team store's catalog records. */
type DefinitionsPlace =
  { cacheFile: string; catalogRecords?: never } | { catalogRecords: RecordCollection<CatalogEntryRecord>; cacheFile?: never };

/** Dependencies of a catalog store. */
type CatalogStoreOptions = DefinitionsPlace &
  DiscoverySources & {
    /** Where the map's summaries of the servers are kept (data dir), for a session's first answer. */
    serverMapFile?: string;
    /** Where the built search index is kept between processes (data dir); without it each process builds its own. */
    searchIndexFile?: string;
    /** The store's learned-words record, where words learned from use are kept; without it (or learnedWordsFile) nothing is learned. */
    learnedWordsRecords?: RecordCollection<LearnedWordsFile>;
    /** A data dir's learned-words.json instead (opened as files mode keeps it). */
    learnedWordsFile?: string;
    /** The user's synonym groups (config dir), read with the cached definitions. */
    synonymsFile?: string;
    /** Example requests from `loadout enrich` (data dir). */
    exampleRequestsFile?: string;
    /** `search.embeddings` and where tool embeddings are cached (data dir). */
    embeddings?: { settings: EmbeddingsSettings; cacheFile: string };
    /** Server entries of servers.yaml left out for being invalid, with their file:line:col problem. */
    brokenServers?: ReadonlyMap<string, string>;
    /** servers.yaml did not parse at start (the configs are its last good parse, or none). */
    fileProblem?: ServersFileProblem;
    /** What `${VAR}`s expand from (default: process.env) and the secrets.env it reads too: a server using an unset one is told apart. */
    expansion?: { env: NodeJS.ProcessEnv; secretsFile?: string };
  };

/** The current catalog and the operations that produce a new one. */
export class CatalogStore {
  readonly #options: CatalogStoreOptions;
  readonly #definitions: DefinitionStore;
  #overrides: ReadonlyMap<string, string> = new Map();
  #current: Catalog;
  /** The latest read of the definition cache (undefined until the first). */
  #loaded: Promise<void> | undefined;
  /** True once the definition cache has been read (the catalog then describes every cached server). */
  #definitionsRead = false;
  /**
   * The summaries last read from serverMapFile (undefined: none there) with the file's stamp
   * then: read again only when the stamp differs (another process rewrote it).
   */
  #summariesRead: { stamp: string; summaries: Map<string, ServerSummary> | undefined } | undefined;
  /** The summaries last written to serverMapFile, as written. */
  #writtenSummaries: string | undefined;
  /** Writes of the summaries, one after another so the last catalog's wins. */
  #summaryWrites: Promise<void> = Promise.resolve();
  /** Set while the summaries file is to be brought in step with the catalog. */
  #summariesDue: NodeJS.Timeout | undefined;
  /** Everything that may still write a file: discoveries, re-checks, the summaries, learned words. */
  readonly #work = new WorkInFlight();
  readonly #discovery: CatalogDiscovery;
  #brokenServers: ReadonlyMap<string, string>;
  #fileProblem: ServersFileProblem | undefined;
  readonly #listeners = new Set<(catalog: Catalog) => void>();
  #learned: ReadonlyMap<string, string> = new Map();
  /** Remembered queries: query key → tool id → evidence. */
  #recall: ReadonlyMap<string, ReadonlyMap<string, number>> = new Map();
  #synonyms: ReadonlyMap<string, string[]> = new Map();
  /** Example requests by tool hash. */
  #examples: ReadonlyMap<string, string[]> = new Map();
  readonly #learnedWords: LearnedWordsStore | undefined;
  readonly #embeddings: EmbeddingRanking | undefined;
  readonly #searchIndex: SearchIndexFile | undefined;
  /** Records what sessions use after a search; a no-op without a learned-words file. */
  readonly learning: SearchLearning | undefined;

  constructor(options: CatalogStoreOptions) {
    this.#options = options;
    this.#brokenServers = options.brokenServers ?? new Map();
    this.#fileProblem = options.fileProblem;
    this.#definitions = new DefinitionStore(storedDefinitions(options.catalogRecords ?? dataDirRecords(options.cacheFile, 'catalog')));
    this.#searchIndex = options.searchIndexFile
      ? new SearchIndexFile(options.searchIndexFile, { logger: options.logger, work: this.#work })
      : undefined;
    const learnedWords = options.learnedWordsRecords ?? options.learnedWordsFile;
    this.#learnedWords = learnedWords ? new LearnedWordsStore(learnedWords) : undefined;
    this.#embeddings = options.embeddings
      ? new EmbeddingRanking(options.embeddings.settings, options.embeddings.cacheFile, options.logger)
      : undefined;
    this.learning = this.#learnedWords
      ? new SearchLearning(this.#learnedWords, (learned) => this.#adoptLearned(learned), { work: this.#work })
      : undefined;
    this.#discovery = new CatalogDiscovery({
      ...options,
      definitions: this.#definitions,
      work: this.#work,
      ensureLoaded: () => this.ensureLoaded(),
      undiscoveredServers: () => this.undiscoveredServers,
      rebuild: () => this.#replace(),
    });
    this.#current = this.#build();
    // Lives as long as the pool, so the subscription is never ended.
    options.pool.onEvent((event) => {
      if (event.type === 'configured') this.#replace();
    });
    // A server's start skips the era probe when the cache knows the era it spoke last.
    options.pool.useEraMemory(async (server) => {
      await this.ensureLoaded();
      return this.#definitions.all[server]?.era;
    });
  }

  /** The catalog now. */
  get current(): Catalog {
    return this.#current;
  }

  /** Enabled servers with no cached definitions (they need discovery); meaningful once loaded. */
  get undiscoveredServers(): string[] {
    return enabledServerNames(this.#options.pool.configs).filter((server) => !this.#definitions.all[server]);
  }

  /** The embeddings model's scores for `query` over the enabled tools; undefined without one or on failure. */
  async modelScores(query: string): Promise<ReadonlyMap<string, number> | undefined> {
    return this.#embeddings?.scores(query, this.#current.visible());
  }

  /**
   * The map of the catalog: every enabled server in config order, with its summary once
   * discovered and its state. Answered from the kept summaries while the definitions are unread
   * (a session's first answer need not wait for them), from the catalog after.
   */
  async serverMap(): Promise<ServerMapEntry[]> {
    let summaries: ReadonlyMap<string, ServerSummary> | undefined = this.#definitionsRead ? this.#current.serverSummaries() : undefined;
    summaries ??= await this.#readSummaries();
    if (!summaries) {
      await this.ensureLoaded();
      summaries = this.#current.serverSummaries();
    }
    const entries = enabledServerNames(this.#options.pool.configs).map((server): ServerMapEntry => {
      const summary = summaries.get(server);
      return { server, ...(summary ? { summary } : {}), state: this.#stateOf(server, summary !== undefined) };
    });
    const broken = [...this.serverProblems({ brief: true })]
      .filter(([, problem]) => problem.code === 'CONFIG_INVALID')
      .map(([server, problem]): ServerMapEntry => ({ server, state: { kind: 'blocked', problem } }));
    return [...entries, ...broken];
  }

  /**
   * The servers no discovery can list until the user fixes something (see serverProblems): each
   * invalid entry, and each undiscovered enabled server using an unset `${VAR}`. `brief`: the
   * entries' places are named from servers.yaml's own name on (the agent's answers have little room).
   */
  serverProblems({ brief = false }: { brief?: boolean } = {}): Map<string, ServerProblem> {
    const file = this.#options.serversFile;
    const broken = new Map(
      [...this.#brokenServers].map(([server, problem]) => [
        server,
        brief && file && problem.startsWith(file) ? path.basename(file) + problem.slice(file.length) : problem,
      ]),
    );
    const { env = process.env, secretsFile } = this.#options.expansion ?? {};
    const undiscovered = new Set(this.undiscoveredServers);
    const configs = Object.fromEntries(Object.entries(this.#options.pool.configs).filter(([server]) => undiscovered.has(server)));
    return serverProblems(configs, broken, env, secretsFile);
  }

  /** Why servers.yaml's entry for `server` was left out (file:line:col and the problem); undefined if it was not. */
  brokenServerProblem(server: string): string | undefined {
    return this.#brokenServers.get(server);
  }

  /** The invalid server entries of the latest read of servers.yaml (a hand edit may fix or break one). */
  setBrokenServers(brokenServers: ReadonlyMap<string, string>): void {
    this.#brokenServers = brokenServers;
  }

  /** Why the latest read of servers.yaml did not parse (its configs are then the last good parse); undefined while it parses. */
  get fileProblem(): ServersFileProblem | undefined {
    return this.#fileProblem;
  }

  /** Record whether the latest read of servers.yaml parsed (undefined) or not. */
  setFileProblem(problem: ServersFileProblem | undefined): void {
    this.#fileProblem = problem;
  }

  // A server's discovery state. Kept in one place so that finer states (a server starting, one
  // waiting for a login) show up in the map and in discover-all-tools alike.
  #stateOf(server: string, summarized: boolean): ServerState {
    if (this.#discovery.isDiscovering(server)) return { kind: 'pending' };
    const known = summarized || this.#definitions.all[server] !== undefined;
    const problem = known ? undefined : this.serverProblems({ brief: true }).get(server);
    if (problem) return { kind: 'blocked', problem };
    const failure = this.#discovery.failure(server);
    if (failure !== undefined && !known) return { kind: 'failed', reason: failure.text };
    return known ? { kind: 'ready' } : { kind: 'pending' };
  }

  async #readSummaries(): Promise<Map<string, ServerSummary> | undefined> {
    const { serverMapFile } = this.#options;
    if (!serverMapFile) return undefined;
    try {
      // Stamped before the read: a rewrite in between only makes the next call read again.
      const stamp = fileStamp(serverMapFile);
      if (stamp === this.#summariesRead?.stamp) return this.#summariesRead.summaries;
      const text = await readTextIfExists(serverMapFile);
      const summaries =
        text === undefined
          ? undefined
          : new Map(ServerSummariesFileSchema.parse(JSON.parse(text)).servers.map((summary) => [summary.server, summary]));
      this.#summariesRead = { stamp, summaries };
      return summaries;
    } catch {
      // Only a shortcut: without it the map waits for the catalog.
      return undefined;
    }
  }

  // The summaries file is to be brought in step with the catalog (after the definitions were read,
  // so an early catalog of no servers never overwrites it), soon or when the store settles.
  #summariesChanged(): void {
    if (!this.#options.serverMapFile || !this.#definitionsRead || this.#summariesDue) return;
    this.#summariesDue = setTimeout(() => this.#keepSummaries(), KEEP_SUMMARIES_AFTER_MS).unref();
  }

  #keepSummaries(): void {
    clearTimeout(this.#summariesDue);
    this.#summariesDue = undefined;
    const { serverMapFile, logger } = this.#options;
    if (!serverMapFile) return;
    const text = `${JSON.stringify({ version: 1, servers: [...this.#current.serverSummaries().values()] })}\n`;
    if (text === this.#writtenSummaries) return;
    this.#writtenSummaries = text;
    this.#summaryWrites = this.#work.track(
      this.#summaryWrites
        .then(() => writeTextAtomic(serverMapFile, text))
        .catch((error: unknown) => logger.warn({ mod: 'catalog', err: errorMessage(error) }, 'could not keep the server map')),
    );
  }

  /**
   * Settles once every discovery, re-check, summaries write and learned-words record begun so far
   * (and any they begin) has landed: an owner that stops awaits it after closing the pool, so no
   * file is written after its close resolves. Never rejects.
   */
  async settled(): Promise<void> {
    // Work that lands may change the catalog again, and so make the summaries due again.
    do {
      if (this.#summariesDue) this.#keepSummaries();
      await this.#work.settled();
    } while (this.#summariesDue);
  }

  /** Read the learned words again (another replica learned some) and search with them; unreadable ones are left as they were. */
  async rereadLearned(): Promise<void> {
    const learned = await this.#learnedWords?.readAll();
    if (learned) this.#adoptLearned(learned);
  }

  /** Subscribe to new catalogs; returns the unsubscribe function. */
  onChange(listener: (catalog: Catalog) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Re-read the definition cache and adopt new server configs, in one new catalog (a servers.yaml
   * edit, perhaps by a `loadout refresh` beside this process, which writes both files).
   */
  reload(configs: Record<string, ServerConfig>): Promise<void> {
    this.#loaded = this.#readDefinitions().then(() => this.#options.pool.configure(configs));
    return this.#loaded;
  }

  /**
   * Load the cached definitions unless they were loaded already. A gateway reads them on first
   * need rather than at start (its idle tools/list lists only meta-tools, and parsing a large
   * cache is most of what a warm start grows with); a cache that cannot be read is logged and
   * treated as empty, so discovery rebuilds it instead of the running gateway failing.
   */
  ensureLoaded(): Promise<void> {
    this.#loaded ??= this.#readDefinitions().then(() => this.#replace());
    return this.#loaded;
  }

  /** Servers whose most recent discovery failed and that are still undiscovered, with the failure. */
  discoveryFailures(): ReadonlyMap<string, Failure> {
    return this.#discovery.discoveryFailures();
  }

  /**
   * Connect to each server (bounded concurrency, per-server timeout), list its tools, cache them,
   * and stop the lazy ones again. A failing server is reported and skipped.
   */
  discover(servers?: string[], options: DiscoverOptions = {}): Promise<DiscoveryResult[]> {
    return this.#discovery.discover(servers, options);
  }

  /** Re-list a server that just connected outside discovery, or announced a change (see CatalogDiscovery.recheck). */
  recheck(server: string, options: { start?: boolean; changed?: boolean } = {}): Promise<void> {
    return this.#discovery.recheck(server, options);
  }

  /** Before a call reaches `server`: re-list its tools first when changed tools are blocked (see CatalogDiscovery). */
  confirmBeforeCall(server: string): Promise<void> {
    return this.#discovery.confirmBeforeCall(server);
  }

  /** Re-list a running server's tools after it said they changed; returns how many it listed. */
  relistTools(server: string): Promise<number> {
    return this.#discovery.relistTools(server);
  }

  /** New promoted descriptions, by tool id. */
  setDescriptionOverrides(overrides: ReadonlyMap<string, string>): void {
    this.#overrides = overrides;
    this.#replace();
  }

  async #readDefinitions(): Promise<void> {
    const [definitions] = await Promise.allSettled([this.#definitions.read(), this.#readVocabulary()]);
    this.#definitionsRead = true;
    // The catalog answers the map from now on.
    this.#summariesRead = undefined;
    if (definitions.status === 'rejected')
      this.#options.logger.error(
        { mod: 'catalog', err: errorMessage(definitions.reason) },
        'cached tool definitions unreadable; rediscovering',
      );
  }

  // Said once by this store (a process's gateway or command has one): every new catalog would otherwise repeat it.
  #vectorWarningGiven = false;
  #vectorsUnavailable = (error: Error): void => {
    if (this.#vectorWarningGiven) return;
    this.#vectorWarningGiven = true;
    this.#options.logger.error(
      { mod: 'catalog', err: error.message },
      'search ranks by word matches only: the word vectors could not be loaded',
    );
  };

  #build(): Catalog {
    return Catalog.build({
      configs: this.#options.pool.configs,
      definitions: this.#definitions.all,
      descriptionOverrides: this.#overrides,
      blockChangedTools: this.#options.settings.block_changed_tools,
      search: {
        onVectorsUnavailable: this.#vectorsUnavailable,
        vocabulary: {
          keywords: keywordsOf(this.#options.pool.configs),
          learned: this.#learned,
          examples: examplesByTool(this.#definitions.all, this.#examples),
        },
        synonyms: this.#synonyms,
        recall: this.#recall,
        ...(this.#searchIndex ? { savedIndex: this.#searchIndex } : {}),
      },
    });
  }

  // Learned words and synonyms are hints: an unreadable file is logged and searched without.
  async #readVocabulary(): Promise<void> {
    const { logger, synonymsFile, exampleRequestsFile } = this.#options;
    const [learned, synonyms, examples] = await Promise.allSettled([
      this.#learnedWords?.readAll(),
      synonymsFile ? readSynonyms(synonymsFile) : undefined,
      exampleRequestsFile ? new ExampleRequestsStore(exampleRequestsFile).read() : undefined,
    ]);
    if (examples.status === 'fulfilled' && examples.value) this.#examples = examples.value;
    if (learned.status === 'fulfilled' && learned.value) ({ words: this.#learned, queries: this.#recall } = learned.value);
    if (synonyms.status === 'fulfilled' && synonyms.value) this.#synonyms = synonyms.value;
    if (synonyms.status === 'rejected') logger.error({ mod: 'catalog', err: errorMessage(synonyms.reason) }, 'synonyms file ignored');
  }

  // What the learned-words file holds after this process recorded in it (others' records
  // included), answered by the write itself rather than read back.
  #adoptLearned({ words, queries }: LearnedSearch): void {
    this.#learned = words;
    this.#recall = queries;
    this.#replace();
  }

  #replace(): void {
    this.#current = this.#build();
    this.#summariesChanged();
    for (const listener of this.#listeners) listener(this.#current);
  }
}
