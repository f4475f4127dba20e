// Holds the current Catalog and replaces it when its sources change: discovery results, a
// servers.yaml reload, a promoted description. Listeners hear about each new catalog. It owns
// loading too: the cached definitions are read on first need (what to discover, and when, is the
// gateway's business). The server configs it builds from are the pool's (their one owner); a change of
// them reaches this store as the pool's 'configured' event.
import pLimit from 'p-limit';
import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import * as z from 'zod';
import {
  enabledServerNames,
  oauthRecordFile,
  fileStamp,
  readTextIfExists,
  writeTextAtomic,
  readOAuthRecord,
  type EmbeddingsSettings,
  type GatewaySettings,
  type ServerConfig,
  type ToolMergeReport,
} from '../config/index.js';
import {
  OPTIONAL_LIST_NAMES,
  isNeedsAuthorizationMessage,
  type ListFailures,
  type ServerDefinitions,
  type ServerPool,
} from '../downstream/index.js';
import { WorkInFlight, errorMessage, type Logger } from '../shared/index.js';
import { Catalog } from './catalog.js';
import { DefinitionStore } from './definitionStore.js';
import { EmbeddingRanking } from './embeddingRanking.js';
import { LearnedWordsStore, type LearnedSearch } from './learnedWords.js';
import { SearchLearning } from './searchLearning.js';
import { ExampleRequestsStore } from './exampleRequests.js';
import { examplesByTool, keywordsOf, readSynonyms } from './searchVocabulary.js';
import { ALL_LISTS, type ServerListing } from './serverListing.js';
import { recordDiscoveredTools } from './switchboard.js';
import type { ServerMapEntry, ServerState, ServerSummary } from './serverMap.js';

// The map's summaries as kept in the data dir: read before the catalog itself, so the first
// answer of a session (its instructions) can name the servers without parsing every definition.
const ServerSummariesFileSchema = z.object({
  version: z.literal(1),
  servers: z.array(z.object({ server: z.string(), purpose: z.string(), tools: z.number() })),
});

let vectorWarningGiven = false;

/**
 * Outcome of discovering one server; `merge` says what changed in servers.yaml, `listFailures`
 * which optional lists (prompts, resources, templates) failed beside the tools.
 */
export type DiscoveryResult =
  | {
      server: string;
      ok: true;
      toolCount: number;
      ms: number;
      listFailures?: ListFailures;
      merge?: ToolMergeReport;
      mergeError?: string;
    }
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
  /** Where the map's summaries of the servers are kept (data dir), for a session's first answer. */
  serverMapFile?: string;
  /** Where words learned from use are kept (data dir); without it nothing is learned. */
  learnedWordsFile?: string;
  /** The user's synonym groups (config dir), read with the cached definitions. */
  synonymsFile?: string;
  /** Example requests from `loadout enrich` (data dir). */
  exampleRequestsFile?: string;
  /** `search.embeddings` and where tool embeddings are cached (data dir). */
  embeddings?: { settings: EmbeddingsSettings; cacheFile: string };
  /** Server entries of servers.yaml left out for being invalid, with their file:line:col problem. */
  brokenServers?: ReadonlyMap<string, string>;
}

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
  /** Everything that may still write a file: discoveries, re-checks, the summaries, learned words. */
  readonly #work = new WorkInFlight();
  /** Servers being discovered, with the discovery's listing. */
  readonly #discovering = new Map<string, Promise<unknown>>();
  /** Servers whose latest discovery failed, with the reason. */
  readonly #failures = new Map<string, string>();
  #brokenServers: ReadonlyMap<string, string>;
  readonly #rechecks = new Map<string, Promise<void>>();
  /** Re-checks after a listing during which the server announced a change, until they have ended. */
  readonly #rechecksAfter = new Map<string, Promise<void>>();
  readonly #listeners = new Set<(catalog: Catalog) => void>();
  #learned: ReadonlyMap<string, string> = new Map();
  /** Remembered queries: query key → tool id → evidence. */
  #recall: ReadonlyMap<string, ReadonlyMap<string, number>> = new Map();
  #synonyms: ReadonlyMap<string, string[]> = new Map();
  /** Example requests by tool hash. */
  #examples: ReadonlyMap<string, string[]> = new Map();
  readonly #learnedWords: LearnedWordsStore | undefined;
  readonly #embeddings: EmbeddingRanking | undefined;
  /** Records what sessions use after a search; a no-op without a learned-words file. */
  readonly learning: SearchLearning | undefined;

  constructor(options: CatalogStoreOptions) {
    this.#options = options;
    this.#brokenServers = options.brokenServers ?? new Map();
    this.#definitions = new DefinitionStore(options.cacheFile);
    this.#learnedWords = options.learnedWordsFile ? new LearnedWordsStore(options.learnedWordsFile) : undefined;
    this.#embeddings = options.embeddings
      ? new EmbeddingRanking(options.embeddings.settings, options.embeddings.cacheFile, options.logger)
      : undefined;
    this.learning = this.#learnedWords
      ? new SearchLearning(this.#learnedWords, (learned) => this.#adoptLearned(learned), { work: this.#work })
      : undefined;
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
    // The map has little room: the entry's place is named from the file's own name on.
    const file = this.#options.serversFile;
    const broken = [...this.#brokenServers].map(([server, problem]): ServerMapEntry => ({
      server,
      state: { kind: 'failed', reason: file && problem.startsWith(file) ? path.basename(file) + problem.slice(file.length) : problem },
    }));
    return [...entries, ...broken];
  }

  /** Why servers.yaml's entry for `server` was left out (file:line:col and the problem); undefined if it was not. */
  brokenServerProblem(server: string): string | undefined {
    return this.#brokenServers.get(server);
  }

  /** The invalid server entries of the latest read of servers.yaml (a hand edit may fix or break one). */
  setBrokenServers(brokenServers: ReadonlyMap<string, string>): void {
    this.#brokenServers = brokenServers;
  }

  // A server's discovery state. Kept in one place so that finer states (a server starting, one
  // waiting for a login) show up in the map and in discover-all-tools alike.
  #stateOf(server: string, summarized: boolean): ServerState {
    if (this.#discovering.has(server)) return { kind: 'pending' };
    const known = summarized || this.#definitions.all[server] !== undefined;
    const failure = this.#failures.get(server);
    if (failure !== undefined && !known) return { kind: 'failed', reason: failure };
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

  // Keeps the summaries file in step with the catalog (after the definitions were read, so an
  // early catalog of no servers never overwrites it).
  #keepSummaries(): void {
    const { serverMapFile, logger } = this.#options;
    if (!serverMapFile || !this.#definitionsRead) return;
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
  settled(): Promise<void> {
    return this.#work.settled();
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
  discover(servers?: string[], options: DiscoverOptions = {}): Promise<DiscoveryResult[]> {
    return this.#work.track(this.#discoverAll(servers, options));
  }

  async #discoverAll(servers: string[] | undefined, options: DiscoverOptions): Promise<DiscoveryResult[]> {
    await this.ensureLoaded();
    servers ??= this.undiscoveredServers;
    const limit = pLimit(this.#options.settings.discovery_concurrency);
    const results = await Promise.all(
      servers.map((server) =>
        limit(async (): Promise<DiscoveryResult> => {
          const result = await this.#discoverOne(server);
          if (result.ok) this.#failures.delete(server);
          else this.#failures.set(server, result.error);
          options.onResult?.(result);
          return result;
        }),
      ),
    );
    const listed = results.filter((result) => result.ok).map((result) => result.server);
    if (!listed.length) return results;
    await this.#definitions.flush();
    const merged = await this.#adopt(listed, options.acceptChanged);
    return results.map((result) => (result.ok ? { ...result, ...merged(result.server) } : result));
  }

  #discoverOne(server: string): Promise<DiscoveryResult> {
    // Set after the listing began (synchronously), and deleted in its finally, so always before it settles.
    const listing = this.#listDiscovered(server);
    this.#discovering.set(server, listing);
    return listing;
  }

  async #listDiscovered(server: string): Promise<DiscoveryResult> {
    const { pool, settings, logger } = this.#options;
    const timeoutMs = settings.discovery_timeout_seconds * 1000;
    const startedAt = performance.now();
    const ms = () => Math.round(performance.now() - startedAt);
    try {
      const stamp = this.#definitions.stamp();
      // Discovery learns the server afresh, its era too (a legacy server may have been upgraded).
      const definitions = await pool.listDefinitions(server, { signal: AbortSignal.timeout(timeoutMs), timeoutMs, probeEra: true });
      this.#record(server, definitions, stamp);
      const { listFailures } = definitions;
      return { server, ok: true, toolCount: definitions.tools.length, ms: ms(), ...(listFailures ? { listFailures } : {}) };
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
   * `start`, starts it first. One re-check per server runs at a time; callers share it, except
   * with `changed` (the server announced that its lists changed): a listing under way may have had
   * its answers before the change, so one more re-check follows it.
   */
  recheck(server: string, options: { start?: boolean; changed?: boolean } = {}): Promise<void> {
    const running = this.#rechecks.get(server);
    const listing = running ?? this.#discovering.get(server);
    if (listing && options.changed) return this.#recheckAfter(server, listing);
    if (running) return running;
    // Checked synchronously before listTools, which would otherwise start a stopped server.
    if (this.#discovering.has(server) || (!options.start && !this.#options.pool.isConnected(server))) return Promise.resolve();
    const recheck = this.#work.track(this.#relist(server)).finally(() => this.#rechecks.delete(server));
    this.#rechecks.set(server, recheck);
    return recheck;
  }

  // Shared by every change announced until it has ended, its own listing's time included: a server
  // that announces a change whenever it is listed costs one more listing, not an endless chain.
  #recheckAfter(server: string, listing: Promise<unknown>): Promise<void> {
    let next = this.#rechecksAfter.get(server);
    if (!next) {
      next = this.#work.track(
        listing
          .catch(() => undefined)
          .then(() => this.recheck(server))
          .finally(() => this.#rechecksAfter.delete(server)),
      );
      this.#rechecksAfter.set(server, next);
    }
    return next;
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
    const stamp = this.#definitions.stamp();
    const [definitions] = await Promise.all([this.#options.pool.listDefinitions(server), this.ensureLoaded()]);
    const toolsBefore = this.#definitions.all[server]?.tools;
    if (!this.#record(server, definitions, stamp, { ifChanged: true })) return;
    await this.#definitions.flush();
    // Changed tools go through servers.yaml (hashes, new names); other lists only rebuild the catalog.
    if (isDeepStrictEqual(toolsBefore, this.#definitions.all[server]?.tools)) this.#replace();
    else await this.#adopt([server], false);
  }

  /**
   * Re-list a running server's tools after it said they changed, store them (the other lists stay)
   * and merge them into servers.yaml; returns how many it listed.
   */
  relistTools(server: string): Promise<number> {
    return this.#work.track(this.#relistTools(server));
  }

  async #relistTools(server: string): Promise<number> {
    const stamp = this.#definitions.stamp();
    const [tools] = await Promise.all([this.#options.pool.listTools(server), this.ensureLoaded()]);
    const listing: ServerListing = { covers: ['tools'], definitions: { tools }, listedAt: new Date().toISOString() };
    if (this.#definitions.record(server, listing, stamp, { ifChanged: true })) {
      await this.#definitions.flush();
      await this.#adopt([server], false);
    }
    return tools.length;
  }

  // Take a complete listing into the entry in memory (flush() writes it), and log an optional
  // list that newly failed or answers again: said once, not at every re-check.
  #record(server: string, definitions: ServerDefinitions, stamp: number, options: { ifChanged?: boolean } = {}): boolean {
    const before: ListFailures = this.#definitions.all[server]?.listFailures ?? {};
    const listing: ServerListing = { covers: ALL_LISTS, definitions, listedAt: new Date().toISOString() };
    const changed = this.#definitions.record(server, listing, stamp, options);
    const after: ListFailures = this.#definitions.all[server]?.listFailures ?? {};
    const log = this.#options.logger;
    for (const list of OPTIONAL_LIST_NAMES) {
      if (after[list] !== undefined && after[list] !== before[list])
        log.warn({ mod: 'catalog', server, err: after[list] }, `${list} not listed; the tools and other lists stand`);
      else if (after[list] === undefined && before[list] !== undefined) log.info({ mod: 'catalog', server }, `${list} listed again`);
    }
    return changed;
  }

  // Takes the servers' recorded definitions into one new catalog, after merging their tools into
  // servers.yaml (when set) and adopting the config as written there (it may hold concurrent edits).
  async #adopt(
    servers: readonly string[],
    acceptChanged = false,
  ): Promise<(server: string) => Partial<Extract<DiscoveryResult, { ok: true }>>> {
    const { serversFile, pool, logger } = this.#options;
    if (!serversFile) {
      this.#replace();
      return () => ({});
    }
    const entries = servers.flatMap((server) => {
      const tools = this.#definitions.all[server]?.tools;
      return tools ? [[server, tools] as const] : [];
    });
    const tools = Object.fromEntries(entries);
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
    this.#keepSummaries();
    for (const listener of this.#listeners) listener(this.#current);
  }
}
