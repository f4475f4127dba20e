// Holds the current Catalog and replaces it when its sources change: discovery results, a
// servers.yaml reload, a promoted description. Listeners hear about each new catalog. It owns
// readiness too: the cached definitions are read on first need, then uncached servers are
// discovered. The server configs it builds from are the pool's (their one owner); a change of
// them reaches this store as the pool's 'configured' event.
import pLimit from 'p-limit';
import { isDeepStrictEqual } from 'node:util';
import { enabledServerNames, type GatewaySettings, type ServerConfig, type ToolMergeReport } from '../config/index.js';
import type { ServerPool } from '../downstream/index.js';
import { errorMessage, type Logger } from '../shared/index.js';
import { Catalog } from './catalog.js';
import { readDefinitionCache, writeDefinitionCache, type CachedServerTools, type DefinitionCache } from './definitionCache.js';
import { recordDiscoveredTools } from './switchboard.js';

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
  settings: Pick<GatewaySettings, 'discovery_concurrency' | 'discovery_timeout_seconds'> & Partial<Pick<GatewaySettings, 'block_changed_tools'>>;
  logger: Logger;
  /** servers.yaml: when set, discoveries are smart-merged into its `tools:` maps. */
  serversFile?: string;
}

/** The current catalog and the operations that produce a new one. */
export class CatalogStore {
  readonly #options: CatalogStoreOptions;
  #definitions: DefinitionCache = {};
  #overrides: ReadonlyMap<string, string> = new Map();
  #current: Catalog;
  /** The latest read of the definition cache (undefined until the first). */
  #loaded: Promise<void> | undefined;
  /** Load-then-discover, started by the first ready() call. */
  #ready: Promise<void> | undefined;
  readonly #discovering = new Set<string>();
  /** Servers whose latest discovery failed, with the reason. */
  readonly #failures = new Map<string, string>();
  readonly #listeners = new Set<(catalog: Catalog) => void>();

  constructor(options: CatalogStoreOptions) {
    this.#options = options;
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

  /**
   * Load the cached catalog, then discover the servers it lacks. Started by the first call (the
   * first need of the catalog, or a session's first tools/list once answered); settles when both
   * have finished, and never rejects (failures are logged and kept in discoveryFailures()).
   */
  ready(): Promise<void> {
    this.#ready ??= this.ensureLoaded().then(() => this.discoverUncached());
    return this.#ready;
  }

  /** Discover the enabled servers that have no cached definitions (at start, after servers are added). */
  async discoverUncached(): Promise<void> {
    try {
      const servers = this.undiscoveredServers;
      if (!servers.length) return;
      this.#options.logger.info({ mod: 'catalog', servers }, 'discovering servers without cached tools');
      await this.discover(servers);
    } catch (error) {
      this.#options.logger.error({ mod: 'catalog', err: errorMessage(error) }, 'discovery failed');
    }
  }

  /** Servers whose most recent discovery failed and that are still undiscovered, with the reason. */
  discoveryFailures(): ReadonlyMap<string, string> {
    // A server discovered later (an always-on one reconnecting after a failed start) is no longer a failure.
    const undiscovered = new Set(this.undiscoveredServers);
    return new Map([...this.#failures].filter(([server]) => undiscovered.has(server)));
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
      const tools = await pool.listTools(server, { signal: AbortSignal.timeout(timeoutMs), timeoutMs });
      found[server] = { discoveredAt: new Date().toISOString(), tools };
      return { server, ok: true, toolCount: tools.length, ms: ms() };
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
   * change shows up as `changed`. Does nothing unless the server is connected right now.
   */
  async recheck(server: string): Promise<void> {
    const { pool } = this.#options;
    // Checked synchronously before listTools, which would otherwise start a stopped server.
    if (this.#discovering.has(server) || !pool.isConnected(server)) return;
    const [tools] = await Promise.all([pool.listTools(server), this.ensureLoaded()]);
    if (isDeepStrictEqual(tools, this.#definitions[server]?.tools)) return;
    await this.updateServerTools(server, tools);
  }

  /** Replace one server's definitions after it re-listed its tools while running (and merge them into servers.yaml). */
  async updateServerTools(server: string, tools: CachedServerTools['tools']): Promise<void> {
    await this.ensureLoaded();
    const entry = { discoveredAt: new Date().toISOString(), tools };
    await writeDefinitionCache(this.#options.cacheFile, { [server]: entry });
    await this.#adopt({ [server]: entry }, false);
  }

  // Takes new definitions into one new catalog, after merging them into servers.yaml (when set)
  // and adopting the config as written there (it may hold concurrent edits).
  async #adopt(found: Record<string, CachedServerTools>, acceptChanged = false): Promise<(server: string) => Partial<Extract<DiscoveryResult, { ok: true }>>> {
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
    try {
      this.#definitions = await readDefinitionCache(this.#options.cacheFile);
    } catch (error) {
      this.#options.logger.error({ mod: 'catalog', err: errorMessage(error) }, 'cached tool definitions unreadable; rediscovering');
    }
  }

  #build(): Catalog {
    return Catalog.build({
      configs: this.#options.pool.configs,
      definitions: this.#definitions,
      descriptionOverrides: this.#overrides,
      blockChangedTools: this.#options.settings.block_changed_tools,
    });
  }

  #replace(): void {
    this.#current = this.#build();
    for (const listener of this.#listeners) listener(this.#current);
  }
}
