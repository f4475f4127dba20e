// Holds the current Catalog and replaces it when its sources change: discovery results, a
// servers.yaml reload, a promoted description. Listeners hear about each new catalog.
import pLimit from 'p-limit';
import type { GatewaySettings, ServerConfig } from '../config/index.js';
import type { ServerPool } from '../downstream/index.js';
import { errorMessage, type Logger } from '../shared/index.js';
import { Catalog } from './catalog.js';
import { readDefinitionCache, writeDefinitionCache, type CachedServerTools, type DefinitionCache } from './definitionCache.js';

/** Outcome of discovering one server. */
export type DiscoveryResult = { server: string; ok: true; toolCount: number; ms: number } | { server: string; ok: false; error: string; ms: number };

/** Dependencies of a catalog store. */
export interface CatalogStoreOptions {
  pool: ServerPool;
  cacheFile: string;
  configs: Record<string, ServerConfig>;
  settings: Pick<GatewaySettings, 'discovery_concurrency' | 'discovery_timeout_seconds'>;
  logger: Logger;
}

/** The current catalog and the operations that produce a new one. */
export class CatalogStore {
  readonly #options: CatalogStoreOptions;
  #configs: Record<string, ServerConfig>;
  #definitions: DefinitionCache = {};
  #overrides: ReadonlyMap<string, string> = new Map();
  #current: Catalog;
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

  /** Enabled servers with no cached definitions (they need discovery). */
  get undiscoveredServers(): string[] {
    return Object.entries(this.#configs)
      .filter(([name, config]) => config.enabled && !this.#definitions[name])
      .map(([name]) => name);
  }

  /** Subscribe to new catalogs; returns the unsubscribe function. */
  onChange(listener: (catalog: Catalog) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Load cached definitions from the data dir (no process is spawned). */
  async load(): Promise<void> {
    this.#definitions = await readDefinitionCache(this.#options.cacheFile);
    this.#replace();
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
  async discover(servers: string[] = this.undiscoveredServers): Promise<DiscoveryResult[]> {
    const { pool, settings, logger } = this.#options;
    const limit = pLimit(settings.discovery_concurrency);
    const timeoutMs = settings.discovery_timeout_seconds * 1000;
    const found: Record<string, CachedServerTools> = {};
    const results = await Promise.all(
      servers.map((server) =>
        limit(async (): Promise<DiscoveryResult> => {
          const startedAt = performance.now();
          const ms = () => Math.round(performance.now() - startedAt);
          try {
            const tools = await pool.listTools(server, { signal: AbortSignal.timeout(timeoutMs), timeoutMs });
            found[server] = { discoveredAt: new Date().toISOString(), tools };
            return { server, ok: true, toolCount: tools.length, ms: ms() };
          } catch (error) {
            logger.warn({ mod: 'catalog', server, err: errorMessage(error) }, 'discovery failed');
            return { server, ok: false, error: errorMessage(error), ms: ms() };
          } finally {
            if (!pool.config(server)?.always_on) await pool.stop(server);
          }
        }),
      ),
    );
    if (Object.keys(found).length > 0) {
      await writeDefinitionCache(this.#options.cacheFile, found);
      this.#definitions = { ...this.#definitions, ...found };
      this.#replace();
    }
    return results;
  }

  /** Replace one server's definitions after it re-listed its tools while running. */
  async updateServerTools(server: string, tools: CachedServerTools['tools']): Promise<void> {
    const entry = { discoveredAt: new Date().toISOString(), tools };
    await writeDefinitionCache(this.#options.cacheFile, { [server]: entry });
    this.#definitions = { ...this.#definitions, [server]: entry };
    this.#replace();
  }

  #build(): Catalog {
    return Catalog.build({ configs: this.#configs, definitions: this.#definitions, descriptionOverrides: this.#overrides });
  }

  #replace(): void {
    this.#current = this.#build();
    for (const listener of this.#listeners) listener(this.#current);
  }
}
