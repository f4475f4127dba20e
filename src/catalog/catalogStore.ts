// Holds the current Catalog and replaces it when its sources change: discovery results, a
// servers.yaml reload, a promoted description. Listeners hear about each new catalog. It owns
// loading too: the cached definitions are read on first need (what to discover, and when, is the
// gateway's business). The server configs it builds from are the pool's (their one owner); a change of
// them reaches this store as the pool's 'configured' event.
import pLimit from 'p-limit';
import { isDeepStrictEqual } from 'node:util';
import {
  enabledServerNames,
  oauthRecordFile,
  readOAuthRecord,
  type EmbeddingsSettings,
  type GatewaySettings,
  type ServerConfig,
  type ToolMergeReport,
} from '../config/index.js';
import { isNeedsAuthorizationMessage, type ServerPool } from '../downstream/index.js';
import { errorMessage, type Logger } from '../shared/index.js';
import { Catalog } from './catalog.js';
import { readDefinitionCache, writeDefinitionCache, type CachedServerTools, type DefinitionCache } from './definitionCache.js';
import { EmbeddingRanking } from './embeddingRanking.js';
import { LearnedWordsStore } from './learnedWords.js';
import { SearchLearning } from './searchLearning.js';
import { ExampleRequestsStore } from './exampleRequests.js';
import { examplesByTool, keywordsOf, readSynonyms } from './searchVocabulary.js';
import { recordDiscoveredTools } from './switchboard.js';

let vectorWarningGiven = false;

/** Outcome of discovering one server; `merge` says what changed in servers.yaml. */
export type DiscoveryResult =
  | { server: string; ok: true; toolCount: number; ms: number; merge?: ToolMergeReport; mergeError?: string }
  | { server: string; ok: false; error: string; ms: number };

/** Options of one discovery run. */
interface DiscoverOptions {
  /** Approve upstream changes: store the new hashes in servers.yaml (`loadout refresh --accept-changed`). */
  acceptChanged?: boolean;
  /** Hears each server's outcome as it finishes (for progress displays). */
  onResult?: (result: DiscoveryResult) => void;
}

/** Dependencies of a catalog store. */
interface CatalogStoreOptions {
  pool: ServerPool;
  cacheFile: string;
  settings: Pick<GatewaySettings, 'discovery_concurrency' | 'discovery_timeout_seconds'> &
    Partial<Pick<GatewaySettings, 'block_changed_tools'>>;
  logger: Logger;
  /** servers.yaml: when set, discoveries are smart-merged into its `tools:` maps. */
  serversFile?: string;
  /** Where OAuth files of HTTP servers live: servers that failed for want of a login are retried once it has them. */
  oauthDir?: string;
  /** Where words learned from use are kept (data dir); without it nothing is learned. */
  learnedWordsFile?: string;
  /** The user's synonym groups (config dir), read with the cached definitions. */
  synonymsFile?: string;
  /** Example requests from `loadout search enrich` (data dir). */
  exampleRequestsFile?: string;
  /** `search.embeddings` and where tool embeddings are cached (data dir). */
  embeddings?: { settings: EmbeddingsSettings; cacheFile: string };
}

/** The current catalog and the operations that produce a new one. */
export class CatalogStore {
  readonly #options: CatalogStoreOptions;
  #definitions: DefinitionCache = {};
  #overrides: ReadonlyMap<string, string> = new Map();
  #current: Catalog;
  /** The latest read of the definition cache (undefined until the first). */
  #loaded: Promise<void> | undefined;
  readonly #discovering = new Set<string>();
  /** Servers whose latest discovery failed, with the reason. */
  readonly #failures = new Map<string, string>();
  readonly #rechecks = new Map<string, Promise<void>>();
  readonly #listeners = new Set<(catalog: Catalog) => void>();
  #learned: ReadonlyMap<string, string> = new Map();
  #synonyms: ReadonlyMap<string, string[]> = new Map();
  /** Example requests by tool hash. */
  #examples: ReadonlyMap<string, string[]> = new Map();
  readonly #learnedWords: LearnedWordsStore | undefined;
  readonly #embeddings: EmbeddingRanking | undefined;
  /** Records what sessions use after a search; a no-op without a learned-words file. */
  readonly learning: SearchLearning | undefined;

  constructor(options: CatalogStoreOptions) {
    this.#options = options;
    this.#learnedWords = options.learnedWordsFile ? new LearnedWordsStore(options.learnedWordsFile) : undefined;
    this.#embeddings = options.embeddings
      ? new EmbeddingRanking(options.embeddings.settings, options.embeddings.cacheFile, options.logger)
      : undefined;
    this.learning = this.#learnedWords ? new SearchLearning(this.#learnedWords, () => this.#reloadLearned()) : undefined;
    this.#current = this.#build();
    // Lives as long as the pool, so the subscription is never ended.
    options.pool.onEvent((event) => {
      if (event.type === 'configured') this.#replace();
    });
  }

  /** The catalog now. */
  get current(): Catalog {
    return this.#current;
  }

  /** Enabled servers with no cached definitions (they need discovery); meaningful once loaded. */
  get undiscoveredServers(): string[] {
    return enabledServerNames(this.#options.pool.configs).filter((server) => !this.#definitions[server]);
  }

  /** The embeddings model's scores for `query` over the enabled tools; undefined without one or on failure. */
  async modelScores(query: string): Promise<ReadonlyMap<string, number> | undefined> {
    return this.#embeddings?.scores(query, this.#current.visible());
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

  /** Servers whose most recent discovery failed and that are still undiscovered, with the reason. */
  discoveryFailures(): ReadonlyMap<string, string> {
    // A server discovered later (an always-on one reconnecting after a failed start) is no longer a failure.
    const undiscovered = new Set(this.undiscoveredServers);
    return new Map([...this.#failures].filter(([server]) => undiscovered.has(server)));
  }

  /** Discover again the servers that failed for want of a login and have been logged in to since (`loadout auth`). */
  async retryAuthorized(): Promise<void> {
    const { oauthDir } = this.#options;
    if (oauthDir === undefined) return;
    const waiting = [...this.discoveryFailures()].filter(([, error]) => isNeedsAuthorizationMessage(error)).map(([server]) => server);
    if (!waiting.length) return;
    // The OAuth file loses its mark when a login stores tokens; until then a retry would only be refused again.
    const records = await Promise.all(waiting.map((server) => readOAuthRecord(oauthRecordFile(oauthDir, server))));
    const loggedIn = waiting.filter(
      (_server, index) => records[index]?.tokens !== undefined && records[index]?.needsAuthorizationSince === undefined,
    );
    if (loggedIn.length) await this.discover(loggedIn);
  }

  /** New promoted descriptions, by tool id. */
  setDescriptionOverrides(overrides: ReadonlyMap<string, string>): void {
    this.#overrides = overrides;
    this.#replace();
  }

  /**
   * Connect to each server (bounded concurrency, per-server timeout), list its tools, cache them,
   * and stop the lazy ones again. A failing server is reported and skipped.
   */
  async discover(servers?: string[], options: DiscoverOptions = {}): Promise<DiscoveryResult[]> {
    await this.ensureLoaded();
    servers ??= this.undiscoveredServers;
    const limit = pLimit(this.#options.settings.discovery_concurrency);
    const found: Record<string, CachedServerTools> = {};
    const results = await Promise.all(
      servers.map((server) =>
        limit(async (): Promise<DiscoveryResult> => {
          const result = await this.#discoverOne(server, found);
          if (result.ok) this.#failures.delete(server);
          else this.#failures.set(server, result.error);
          options.onResult?.(result);
          return result;
        }),
      ),
    );
    if (Object.keys(found).length === 0) return results;
    await writeDefinitionCache(this.#options.cacheFile, found);
    const merged = await this.#adopt(found, options.acceptChanged);
    return results.map((result) => (result.ok ? { ...result, ...merged(result.server) } : result));
  }

  async #discoverOne(server: string, found: Record<string, CachedServerTools>): Promise<DiscoveryResult> {
    const { pool, settings, logger } = this.#options;
    const timeoutMs = settings.discovery_timeout_seconds * 1000;
    const startedAt = performance.now();
    const ms = () => Math.round(performance.now() - startedAt);
    this.#discovering.add(server);
    try {
      const definitions = await pool.listDefinitions(server, { signal: AbortSignal.timeout(timeoutMs), timeoutMs });
      found[server] = { discoveredAt: new Date().toISOString(), ...definitions };
      return { server, ok: true, toolCount: definitions.tools.length, ms: ms() };
    } catch (error) {
      logger.warn({ mod: 'catalog', server, err: errorMessage(error) }, 'discovery failed');
      return { server, ok: false, error: errorMessage(error), ms: ms() };
    } finally {
      this.#discovering.delete(server);
      // A lazy server goes back to sleep, unless a call reached it meanwhile: its idle timer then decides.
      await pool.stopIfIdle(server);
    }
  }

  /**
   * Re-list a server that just connected outside discovery (a lazy start, a reconnect) and, if
   * its tools differ from the cache, update the cache and the switchboard, so an upstream
   * change shows up as `changed`; changed prompts, resources or templates replace the cached
   * ones. Does nothing unless the server is connected right now; with
   * `start`, starts it first. One re-check per server runs at a time; callers share it.
   */
  recheck(server: string, options: { start?: boolean } = {}): Promise<void> {
    const running = this.#rechecks.get(server);
    if (running) return running;
    // Checked synchronously before listTools, which would otherwise start a stopped server.
    if (this.#discovering.has(server) || (!options.start && !this.#options.pool.isConnected(server))) return Promise.resolve();
    const recheck = this.#relist(server).finally(() => this.#rechecks.delete(server));
    this.#rechecks.set(server, recheck);
    return recheck;
  }

  /**
   * Before a call reaches `server`: when changed tools are blocked and the server's tools have not
   * been re-listed since it (re)started, start it and re-list them, so a tool that changed
   * upstream is blocked before its first call rather than after.
   */
  async confirmBeforeCall(server: string): Promise<void> {
    if (!this.#options.settings.block_changed_tools) return;
    const { pool } = this.#options;
    if (pool.isConnected(server) && !this.#rechecks.has(server)) return;
    await this.recheck(server, { start: true });
  }

  async #relist(server: string): Promise<void> {
    const [{ tools, ...listings }] = await Promise.all([this.#options.pool.listDefinitions(server), this.ensureLoaded()]);
    if (!isDeepStrictEqual(tools, this.#definitions[server]?.tools)) await this.updateServerTools(server, tools);
    await this.updateServerListings(server, listings);
  }

  /** Replace one server's definitions after it re-listed its tools while running (and merge them into servers.yaml). */
  async updateServerTools(server: string, tools: CachedServerTools['tools']): Promise<void> {
    await this.ensureLoaded();
    const entry = { ...this.#definitions[server], discoveredAt: new Date().toISOString(), tools };
    await writeDefinitionCache(this.#options.cacheFile, { [server]: entry });
    await this.#adopt({ [server]: entry }, false);
  }

  /**
   * Replace one server's prompts, resources, resource templates or capabilities after it said
   * they changed (a list_changed notification) or restarted. A server never discovered is left
   * to discovery.
   */
  async updateServerListings(
    server: string,
    listings: Pick<CachedServerTools, 'prompts' | 'resources' | 'resourceTemplates' | 'capabilities'>,
  ): Promise<void> {
    await this.ensureLoaded();
    const current = this.#definitions[server];
    if (!current) return;
    // A list the server does not declare stays as cached (undefined would read as a change).
    const entry = { ...current, ...Object.fromEntries(Object.entries(listings).filter(([, list]) => list !== undefined)) };
    if (isDeepStrictEqual(entry, current)) return;
    await writeDefinitionCache(this.#options.cacheFile, { [server]: entry });
    this.#definitions = { ...this.#definitions, [server]: entry };
    this.#replace();
  }

  // Takes new definitions into one new catalog, after merging them into servers.yaml (when set)
  // and adopting the config as written there (it may hold concurrent edits).
  async #adopt(
    found: Record<string, CachedServerTools>,
    acceptChanged = false,
  ): Promise<(server: string) => Partial<Extract<DiscoveryResult, { ok: true }>>> {
    const { serversFile, pool, logger } = this.#options;
    this.#definitions = { ...this.#definitions, ...found };
    if (!serversFile) {
      this.#replace();
      return () => ({});
    }
    const tools = Object.fromEntries(Object.entries(found).map(([server, entry]) => [server, entry.tools]));
    try {
      const { config, reports } = await recordDiscoveredTools(serversFile, tools, { acceptChanged });
      // The pool's 'configured' event rebuilds the catalog.
      pool.configure(config.servers);
      return (server) => {
        const merge = reports.get(server);
        return merge ? { merge } : {};
      };
    } catch (error) {
      const mergeError = errorMessage(error);
      logger.error({ mod: 'catalog', err: mergeError }, 'could not record discovered tools in servers.yaml');
      this.#replace();
      return () => ({ mergeError });
    }
  }

  async #readDefinitions(): Promise<void> {
    const [definitions] = await Promise.allSettled([readDefinitionCache(this.#options.cacheFile), this.#readVocabulary()]);
    if (definitions.status === 'fulfilled') this.#definitions = definitions.value;
    else
      this.#options.logger.error(
        { mod: 'catalog', err: errorMessage(definitions.reason) },
        'cached tool definitions unreadable; rediscovering',
      );
  }

  // Said once per process: every new catalog would otherwise repeat it.
  #vectorsUnavailable = (error: Error): void => {
    if (vectorWarningGiven) return;
    vectorWarningGiven = true;
    this.#options.logger.error(
      { mod: 'catalog', err: error.message },
      'search ranks by word matches only: the word vectors could not be loaded',
    );
  };

  #build(): Catalog {
    return Catalog.build({
      configs: this.#options.pool.configs,
      definitions: this.#definitions,
      descriptionOverrides: this.#overrides,
      blockChangedTools: this.#options.settings.block_changed_tools,
      search: {
        onVectorsUnavailable: this.#vectorsUnavailable,
        vocabulary: {
          keywords: keywordsOf(this.#options.pool.configs),
          learned: this.#learned,
          examples: examplesByTool(this.#definitions, this.#examples),
        },
        synonyms: this.#synonyms,
      },
    });
  }

  // Learned words and synonyms are hints: an unreadable file is logged and searched without.
  async #readVocabulary(): Promise<void> {
    const { logger, synonymsFile, exampleRequestsFile } = this.#options;
    const [learned, synonyms, examples] = await Promise.allSettled([
      this.#learnedWords?.read(),
      synonymsFile ? readSynonyms(synonymsFile) : undefined,
      exampleRequestsFile ? new ExampleRequestsStore(exampleRequestsFile).read() : undefined,
    ]);
    if (examples.status === 'fulfilled' && examples.value) this.#examples = examples.value;
    if (learned.status === 'fulfilled' && learned.value) this.#learned = learned.value;
    if (synonyms.status === 'fulfilled' && synonyms.value) this.#synonyms = synonyms.value;
    if (synonyms.status === 'rejected') logger.error({ mod: 'catalog', err: errorMessage(synonyms.reason) }, 'synonyms file ignored');
  }

  async #reloadLearned(): Promise<void> {
    this.#learned = (await this.#learnedWords?.read()) ?? new Map();
    this.#replace();
  }

  #replace(): void {
    this.#current = this.#build();
    for (const listener of this.#listeners) listener(this.#current);
  }
}
