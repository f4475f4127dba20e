// Holds the current Catalog and replaces it when its sources change: discovery results, a
// servers.yaml reload, a promoted description. Listeners hear about each new catalog.
import pLimit from 'p-limit';
import { isDeepStrictEqual } from 'node:util';
import type { GatewaySettings, ServerConfig, ToolMergeReport } from '../config/index.js';
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
export interface DiscoverOptions {
  /** Approve upstream changes: store the new hashes in servers.yaml (`loadout refresh --accept-changed`). */
  acceptChanged?: boolean;
  /** Hears each server's outcome as it finishes (for progress displays). */
  onResult?: (result: DiscoveryResult) => void;
}

/** Dependencies of a catalog store. */
export interface CatalogStoreOptions {
  pool: ServerPool;
  cacheFile: string;
  configs: Record<string, ServerConfig>;
  settings: Pick<GatewaySettings, 'discovery_concurrency' | 'discovery_timeout_seconds'> & Partial<Pick<GatewaySettings, 'block_changed_tools'>>;
  logger: Logger;
  /** servers.yaml: when set, discoveries are smart-merged into its `tools:` maps. */
  serversFile?: string;
}

/** The current catalog and the operations that produce a new one. */
export class CatalogStore {
  readonly #options: CatalogStoreOptions;
  #configs: Record<string, ServerConfig>;
  #definitions: DefinitionCache = {};
  #overrides: ReadonlyMap<string, string> = new Map();
  #current: Catalog;
  /** The latest read of the definition cache (undefined until the first). */
  #loaded: Promise<void> | undefined;
  readonly #discovering = new Set<string>();
  readonly #listeners = new Set<(catalog: Catalog) => void>();

  constructor(options: CatalogStoreOptions) {
    this.#options = options;
    this.#configs = options.configs;
    this.#current = this.#build();
  }

  /** The catalog now. */
  get current(): Catalog {
    return this.#current;
  }

  /** Enabled servers with no cached definitions (they need discovery); meaningful once loaded. */
  get undiscoveredServers(): string[] {
    return Object.entries(this.#configs)
      .filter(([name, config]) => config.enabled && !this.#definitions[name])
      .map(([name]) => name);
  }

  /** The server configs the catalog is built from. */
  get configs(): Readonly<Record<string, ServerConfig>> {
    return this.#configs;
  }

  /** Subscribe to new catalogs; returns the unsubscribe function. */
  onChange(listener: (catalog: Catalog) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Load cached definitions from the data dir (no process is spawned), optionally with new configs. */
  load(configs?: Record<string, ServerConfig>): Promise<void> {
    this.#loaded = this.#read(configs);
    return this.#loaded;
  }

  /**
   * Load the cached definitions unless they were loaded already. A gateway reads them on first
   * need rather than at start (its idle tools/list lists only meta-tools, and parsing a large
   * cache is most of what a warm start grows with); a cache that cannot be read is logged and
   * treated as empty, so discovery rebuilds it instead of the running gateway failing.
   */
  ensureLoaded(): Promise<void> {
    this.#loaded ??= this.#read().catch((error: unknown) => {
      this.#options.logger.error({ mod: 'catalog', err: errorMessage(error) }, 'cached tool definitions unreadable; rediscovering');
    });
    return this.#loaded;
  }

  /** New server configs (a servers.yaml edit). */
  setConfigs(configs: Record<string, ServerConfig>): void {
    this.#configs = configs;
    this.#replace();
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
          options.onResult?.(result);
          return result;
        }),
      ),
    );
    if (Object.keys(found).length === 0) return results;
    await writeDefinitionCache(this.#options.cacheFile, found);
    this.#definitions = { ...this.#definitions, ...found };
    const merged = await this.#recordInSwitchboard(found, options.acceptChanged);
    this.#replace();
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
      if (!pool.config(server)?.always_on && pool.inFlight(server) === 0) await pool.stop(server);
    }
  }

  /**
   * Re-list a server that just connected outside discovery (a lazy start, a reconnect) and, if
   * its tools differ from the cache, update the cache and the switchboard, so an upstream
   * change shows up as `changed`; changed prompts, resources or templates replace the cached
   * ones. Does nothing unless the server is connected right now.
   */
  async recheck(server: string): Promise<void> {
    const { pool } = this.#options;
    // Checked synchronously before listing, which would otherwise start a stopped server.
    if (this.#discovering.has(server) || !pool.isConnected(server)) return;
    const [{ tools, ...listings }] = await Promise.all([pool.listDefinitions(server), this.ensureLoaded()]);
    if (!isDeepStrictEqual(tools, this.#definitions[server]?.tools)) await this.updateServerTools(server, tools);
    await this.updateServerListings(server, listings);
  }

  /** Replace one server's definitions after it re-listed its tools while running (and merge them into servers.yaml). */
  async updateServerTools(server: string, tools: CachedServerTools['tools']): Promise<void> {
    await this.ensureLoaded();
    const entry = { ...this.#definitions[server], discoveredAt: new Date().toISOString(), tools };
    await writeDefinitionCache(this.#options.cacheFile, { [server]: entry });
    this.#definitions = { ...this.#definitions, [server]: entry };
    await this.#recordInSwitchboard({ [server]: entry }, false);
    this.#replace();
  }

  /**
   * Replace one server's prompts, resources, resource templates or capabilities after it said
   * they changed (a list_changed notification) or restarted. A server never discovered is left
   * to discovery.
   */
  async updateServerListings(server: string, listings: Pick<CachedServerTools, 'prompts' | 'resources' | 'resourceTemplates' | 'capabilities'>): Promise<void> {
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

  // Merges into servers.yaml and adopts the config as written (it may hold concurrent edits).
  async #recordInSwitchboard(found: Record<string, CachedServerTools>, acceptChanged = false): Promise<(server: string) => Partial<Extract<DiscoveryResult, { ok: true }>>> {
    const { serversFile, pool, logger } = this.#options;
    if (!serversFile) return () => ({});
    const tools = Object.fromEntries(Object.entries(found).map(([server, entry]) => [server, entry.tools]));
    try {
      const { config, reports } = await recordDiscoveredTools(serversFile, tools, { acceptChanged });
      pool.configure(config.servers);
      this.#configs = config.servers;
      return (server) => {
        const merge = reports.get(server);
        return merge ? { merge } : {};
      };
    } catch (error) {
      const mergeError = errorMessage(error);
      logger.error({ mod: 'catalog', err: mergeError }, 'could not record discovered tools in servers.yaml');
      return () => ({ mergeError });
    }
  }

  async #read(configs?: Record<string, ServerConfig>): Promise<void> {
    this.#definitions = await readDefinitionCache(this.#options.cacheFile);
    // With new configs (a servers.yaml edit, perhaps by `loadout refresh`), both change in one catalog.
    if (configs) this.#configs = configs;
    this.#replace();
  }

  #build(): Catalog {
    return Catalog.build({
      configs: this.#configs,
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
