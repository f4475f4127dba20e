// Discovery and re-checks for the catalog store: list a server (discovery: every server not yet
// cached, bounded and timed; a re-check: one that just connected, or announced a change), record
// what it lists in the definition cache, merge its tools into servers.yaml, and remember why a
// discovery failed (its Failure, by code). The store owns the catalog these rebuild.
import pLimit from 'p-limit';
import { isDeepStrictEqual } from 'node:util';
import type { GatewaySettings, ToolMergeReport } from '../config/index.js';
import { OPTIONAL_LIST_NAMES, type ListFailures, type ServerDefinitions, type ServerPool } from '../downstream/index.js';
import { errorMessage, failureOf, type Failure, type Logger, type WorkInFlight } from '../shared/index.js';
import type { DefinitionStore } from './definitionStore.js';
import { ALL_LISTS, type ServerListing } from './serverListing.js';
import { withApprovals } from './storedApprovals.js';
import { recordDiscoveredTools } from './switchboard.js';

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
  | { server: string; ok: false; failure: Failure; ms: number };

/** Options of one discovery run. */
export interface DiscoverOptions {
  /** Approve upstream changes: store the new hashes in servers.yaml, or in store mode the store's catalog (`loadout refresh --accept-changed`). */
  acceptChanged?: boolean;
  /** Hears each server's outcome as it finishes (for progress displays). */
  onResult?: (result: DiscoveryResult) => void;
}

/** What discovery works with, as the catalog store is given it. */
export interface DiscoverySources {
  pool: ServerPool;
  settings: Pick<GatewaySettings, 'discovery_concurrency' | 'discovery_timeout_seconds'> &
    Partial<Pick<GatewaySettings, 'block_changed_tools'>>;
  logger: Logger;
  /** servers.yaml: when set, discoveries are smart-merged into its `tools:` maps. */
  serversFile?: string;
}

/** The sources, and what of the store's discovery works in: its definitions, its work, what it rebuilds. */
interface CatalogDiscoveryOptions extends DiscoverySources {
  /** The definition cache listings are recorded in. */
  definitions: DefinitionStore;
  /** The store's work in flight: every listing and write is tracked there, so its settled() covers them. */
  work: WorkInFlight;
  /** Reads the cached definitions unless read already. */
  ensureLoaded: () => Promise<void>;
  /** Enabled servers with no cached definitions. */
  undiscoveredServers: () => string[];
  /** Builds a new catalog from the definitions and configs now. */
  rebuild: () => void;
}

/** Lists servers for the catalog store, and keeps what it learns. */
export class CatalogDiscovery {
  readonly #options: CatalogDiscoveryOptions;
  /** Servers being discovered, with the discovery's listing. */
  readonly #discovering = new Map<string, Promise<unknown>>();
  /** Servers whose latest discovery failed, with the failure. */
  readonly #failures = new Map<string, Failure>();
  readonly #rechecks = new Map<string, Promise<void>>();
  /** Re-checks after a listing during which the server announced a change, until they have ended. */
  readonly #rechecksAfter = new Map<string, Promise<void>>();

  constructor(options: CatalogDiscoveryOptions) {
    this.#options = options;
  }

  /** Servers whose most recent discovery failed and that are still undiscovered, with the failure. */
  discoveryFailures(): ReadonlyMap<string, Failure> {
    // A server discovered later (an always-on one reconnecting after a failed start) is no longer a failure.
    const undiscovered = new Set(this.#options.undiscoveredServers());
    return new Map([...this.#failures].filter(([server]) => undiscovered.has(server)));
  }

  /**
   * Connect to each server (bounded concurrency, per-server timeout), list its tools, cache them,
   * and stop the lazy ones again. A failing server is reported and skipped.
   */
  discover(servers?: string[], options: DiscoverOptions = {}): Promise<DiscoveryResult[]> {
    return this.#options.work.track(this.#discoverAll(servers, options));
  }

  async #discoverAll(servers: string[] | undefined, options: DiscoverOptions): Promise<DiscoveryResult[]> {
    await this.#options.ensureLoaded();
    servers ??= this.#options.undiscoveredServers();
    const limit = pLimit(this.#options.settings.discovery_concurrency);
    const results = await Promise.all(
      servers.map((server) =>
        limit(async (): Promise<DiscoveryResult> => {
          const result = await this.#discoverOne(server);
          if (result.ok) this.#failures.delete(server);
          else this.#failures.set(server, result.failure);
          options.onResult?.(result);
          return result;
        }),
      ),
    );
    const listed = results.filter((result) => result.ok).map((result) => result.server);
    if (!listed.length) return results;
    const withMerges = (merged: (server: string) => Partial<Extract<DiscoveryResult, { ok: true }>>): DiscoveryResult[] =>
      results.map((result) => (result.ok ? { ...result, ...merged(result.server) } : result));
    const { serversFile, definitions } = this.#options;
    if (serversFile === undefined) {
      // Store mode: the approvals are kept by the same write as the listings (one per server's record).
      const approved = this.#approve(listed, options.acceptChanged ?? false);
      await definitions.flush();
      this.#options.rebuild();
      return withMerges(approved);
    }
    await definitions.flush();
    return withMerges(await this.#adopt(serversFile, listed, options.acceptChanged));
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
      const stamp = this.#options.definitions.stamp();
      // Discovery learns the server afresh, its era too (a legacy server may have been upgraded).
      const definitions = await pool.listDefinitions(server, { signal: AbortSignal.timeout(timeoutMs), timeoutMs, probeEra: true });
      this.#record(server, definitions, stamp);
      const { listFailures } = definitions;
      return { server, ok: true, toolCount: definitions.tools.length, ms: ms(), ...(listFailures ? { listFailures } : {}) };
    } catch (error) {
      logger.warn({ mod: 'catalog', server, err: errorMessage(error) }, 'discovery failed');
      // A failure that is not loadout's own (none is expected) leaves the server unstarted, as far as loadout knows.
      return { server, ok: false, failure: failureOf(error, 'SERVER_START_FAILED'), ms: ms() };
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
    const recheck = this.#options.work
      .track(this.#relist(server, 'all').then(() => undefined))
      .finally(() => this.#rechecks.delete(server));
    this.#rechecks.set(server, recheck);
    return recheck;
  }

  // Shared by every change announced until it has ended, its own listing's time included: a server
  // that announces a change whenever it is listed costs one more listing, not an endless chain.
  #recheckAfter(server: string, listing: Promise<unknown>): Promise<void> {
    let next = this.#rechecksAfter.get(server);
    if (!next) {
      next = this.#options.work.track(
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

  /**
   * Re-list a running server's tools after it said they changed, store them (the other lists stay)
   * and merge them into servers.yaml; returns how many it listed.
   */
  relistTools(server: string): Promise<number> {
    return this.#options.work.track(this.#relist(server, 'tools'));
  }

  // One listing of a running server, of every list (a re-check) or of its tools alone (after it
  // said they changed), taken in when it changes the entry: changed tools go through servers.yaml
  // (hashes, new names), other lists only rebuild the catalog. Returns how many tools it listed.
  async #relist(server: string, lists: 'all' | 'tools'): Promise<number> {
    const stamp = this.#options.definitions.stamp();
    const { pool, definitions: store } = this.#options;
    const [definitions] = await Promise.all([
      lists === 'all' ? pool.listDefinitions(server) : pool.listTools(server).then((tools): ServerDefinitions => ({ tools })),
      this.#options.ensureLoaded(),
    ]);
    const toolsBefore = store.all[server]?.tools;
    const changed =
      lists === 'all'
        ? this.#record(server, definitions, stamp, { ifChanged: true })
        : store.record(server, { covers: ['tools'], definitions, listedAt: new Date().toISOString() }, stamp, { ifChanged: true });
    if (!changed) return definitions.tools.length;
    const toolsChanged = !isDeepStrictEqual(toolsBefore, store.all[server]?.tools);
    const { serversFile } = this.#options;
    // Store mode: changed tools' approvals are kept by the same write as the listing.
    if (toolsChanged && !serversFile) this.#approve([server], false);
    await store.flush();
    if (toolsChanged && serversFile) await this.#adopt(serversFile, [server], false);
    else this.#options.rebuild();
    return definitions.tools.length;
  }

  // Take a complete listing into the entry in memory (flush() writes it), and log an optional
  // list that newly failed or answers again: said once, not at every re-check.
  #record(server: string, definitions: ServerDefinitions, stamp: number, options: { ifChanged?: boolean } = {}): boolean {
    const before: ListFailures = this.#options.definitions.all[server]?.listFailures ?? {};
    const listing: ServerListing = { covers: ALL_LISTS, definitions, listedAt: new Date().toISOString() };
    const changed = this.#options.definitions.record(server, listing, stamp, options);
    const after: ListFailures = this.#options.definitions.all[server]?.listFailures ?? {};
    const log = this.#options.logger;
    for (const list of OPTIONAL_LIST_NAMES) {
      const failure = after[list];
      if (failure !== undefined && !isDeepStrictEqual(failure, before[list]))
        log.warn({ mod: 'catalog', server, err: failure.text }, `${list} not listed; the tools and other lists stand`);
      else if (after[list] === undefined && before[list] !== undefined) log.info({ mod: 'catalog', server }, `${list} listed again`);
    }
    return changed;
  }

  // Files mode: takes the servers' recorded definitions into one new catalog, after merging their
  // tools into servers.yaml and adopting the config as written there (it may hold concurrent edits).
  async #adopt(
    serversFile: string,
    servers: readonly string[],
    acceptChanged = false,
  ): Promise<(server: string) => Partial<Extract<DiscoveryResult, { ok: true }>>> {
    const { pool, logger } = this.#options;
    const entries = servers.flatMap((server) => {
      const tools = this.#options.definitions.all[server]?.tools;
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
      this.#options.rebuild();
      return () => ({ mergeError });
    }
  }

  // Store mode: approvals go to the servers' catalog records (storedApprovals.ts), each applied to
  // the record as kept when written, so an approval another replica made meanwhile is built on.
  // In memory now; the caller's flush() keeps them with the listings, and then it rebuilds.
  #approve(servers: readonly string[], acceptChanged: boolean): (server: string) => Partial<Extract<DiscoveryResult, { ok: true }>> {
    const { definitions, pool } = this.#options;
    const reports = new Map<string, ToolMergeReport>();
    for (const server of servers) {
      const entry = definitions.all[server];
      if (!entry) continue;
      const config = pool.configs[server];
      const { report } = withApprovals(server, entry, config, acceptChanged);
      reports.set(server, report);
      if (report.added.length || report.accepted.length)
        definitions.amend(server, (kept) => kept && withApprovals(server, kept, config, acceptChanged).entry);
    }
    return (server) => {
      const merge = reports.get(server);
      return merge ? { merge } : {};
    };
  }

  /** Whether a discovery of `server` is under way. */
  isDiscovering(server: string): boolean {
    return this.#discovering.has(server);
  }

  /** Why the latest discovery of `server` failed, unless it succeeded since. */
  failure(server: string): Failure | undefined {
    return this.#failures.get(server);
  }
}
