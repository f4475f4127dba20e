// The one place loadout's runtime is built: servers.yaml read once, the pool that owns the server
// configs (with OAuth for HTTP servers), the catalog over them (recording discoveries in
// servers.yaml; searching with learned words, synonyms, example requests and embeddings),
// state.json, and the optimization loop with its promotions applied. In store mode (`--store`)
// the cached definitions, discovery records, learned search words, optimization data and saved
// toolsets live in the team store, and servers.yaml is only read: every replica reads it, none
// writes discoveries back into it. `serve`, the CLI commands and `optimize` all start here, so no
// command can see a different catalog from another.
import path from 'node:path';
import { nanoid } from 'nanoid';
import { CatalogStore } from '../catalog/index.js';
import {
  StateStore,
  expansionEnv,
  loadServersConfig,
  type LoadoutPaths,
  type ServersFile,
  type ServersFileProblem,
} from '../config/index.js';
import { ServerPool, fileOAuthRecords, storeOAuthRecords, type OAuthRecords } from '../downstream/index.js';
import { OptimizationLoop, OptimizationStore } from '../optimization/index.js';
import type { Logger } from '../shared/index.js';
import { openDataDirStore, type TeamStore } from '../store/index.js';
import { StoredToolsets, type Toolsets } from '../toolsets/index.js';
import type { Telemetry } from '../telemetry/index.js';
import type { DiscoveryRecordsPlace } from './discoveryRecords.js';
import { storedDiscoveryRecords } from './storedDiscoveryRecords.js';

/** Options of openRuntime. */
interface RuntimeOptions {
  paths: LoadoutPaths;
  logger: Logger;
  /** Environment for `${VAR}` expansion (default: process.env); secrets.env fills in the names it leaves unset. */
  env?: NodeJS.ProcessEnv;
  /** The team store (`--store`) state is kept in; without one, the data and config dirs' files. The runtime closes it. */
  store?: TeamStore;
  /** Run on servers.yaml's last good parse (or no servers) when it does not parse, instead of failing: `serve`. */
  lastGoodConfig?: boolean;
  /** This process's replica id (`serve` draws it before telemetry starts); default: a new nanoid. */
  replicaId?: string;
  /** Where the pool's downstream requests are traced and measured; default: off. */
  telemetry?: Telemetry;
}

/** The services every command works with, built from one read of the config dir. */
export interface Runtime {
  /** servers.yaml as read at start; the live server configs are `pool.configs`. */
  readonly config: ServersFile;
  /** Whether servers.yaml exists (without it, `config` holds the defaults and no server). */
  readonly configExists: boolean;
  /** Invalid server entries, left out of `config` so the others run, with their file:line:col problem. */
  readonly brokenServers: ReadonlyMap<string, string>;
  /** With `lastGoodConfig`: servers.yaml did not parse at start, and `config` is its last good parse (or empty). */
  readonly fileProblem: ServersFileProblem | undefined;
  readonly pool: ServerPool;
  readonly catalog: CatalogStore;
  readonly state: StateStore;
  readonly optimization: OptimizationLoop;
  /** Failed discoveries (for backoff and status): discovery.json, or the store's records. */
  readonly discoveryRecords: DiscoveryRecordsPlace;
  /** The shared logins of HTTP servers: the oauth/ files, or the store's sealed records. */
  readonly oauthRecords: OAuthRecords;
  /** Saved toolsets: the config dir's files, or the store's records. */
  readonly toolsets: Toolsets;
  /** Equipped sets and remembered toolsets: the data dir's principals/ files and state.json, or the store's records. */
  readonly equipped: TeamStore['equipped'];
  /** What each MCP client was seen to do after a tools list_changed: the data dir's clients.json, or the store's records. */
  readonly clients: TeamStore['clients'];
  /** The team store in store mode; undefined with files. */
  readonly store: TeamStore | undefined;
  /** This process's id among the replicas of a fleet, drawn at start: heartbeats, audit records and telemetry name it. */
  readonly replicaId: string;
  /** Stop every downstream connection, then close the store. Runs once. */
  close(): Promise<void>;
}

/** Read the config (spawning nothing) and build the runtime; the cached catalog is read on first need. */
export async function openRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { paths, logger, store } = options;
  // Without a team store, state is kept by the files backend in the data and config dirs
  // (openDataDirStore: the formats they have always had, no revision ledger beside them).
  const kept = store ?? (await openDataDirStore(paths));
  const loaded = await loadServersConfig(paths.serversFile, paths.parsedServersFile, { lastGoodOnError: options.lastGoodConfig === true });
  const { config, exists: configExists, brokenServers, fileProblem } = loaded;
  const oauthRecords = store ? storeOAuthRecords(store.oauth) : fileOAuthRecords(paths.oauthDir);
  const env = expansionEnv(paths.secretsFile, options.env);
  const pool = new ServerPool(config.servers, {
    logger,
    env,
    oauthRecords,
    protectedDirs: [paths.configDir, paths.dataDir],
    minStartTimeoutMs: config.gateway.discovery_timeout_seconds * 1000,
    ...(options.telemetry && { telemetry: options.telemetry }),
  });
  const catalog = new CatalogStore({
    pool,
    ...(store ? { catalogRecords: store.catalog } : { cacheFile: paths.catalogCacheFile, serversFile: paths.serversFile }),
    settings: config.gateway,
    logger,
    serverMapFile: path.join(paths.dataDir, 'server-map.json'),
    searchIndexFile: path.join(paths.dataDir, 'search-index.bin'),
    learnedWordsRecords: kept.learnedWords,
    synonymsFile: paths.synonymsFile,
    exampleRequestsFile: paths.exampleRequestsFile,
    brokenServers,
    ...(fileProblem ? { fileProblem } : {}),
    expansion: { env, secretsFile: paths.secretsFile },
    ...(config.search.embeddings ? { embeddings: { settings: config.search.embeddings, cacheFile: paths.embeddingsCacheFile } } : {}),
  });
  const state = new StateStore(paths.stateFile);
  const optimizationData = new OptimizationStore(kept.optimization);
  const optimization = new OptimizationLoop({ store: optimizationData, catalog, settings: config.optimization });
  // Promotions go into the catalog before anything reads it, so a first tools/list or an
  // evaluation's distractor tools show the live descriptions.
  await optimization.applyPromotions();
  const toolsets = new StoredToolsets(kept.toolsets);
  let closed: Promise<void> | undefined;
  // The catalog's files (the summaries it keeps a while after a change) land before the store closes.
  const close = () => (closed ??= pool.close().finally(() => catalog.settled().finally(() => kept.close())));
  const discoveryRecords = storedDiscoveryRecords(kept.discovery);
  return {
    config,
    configExists,
    brokenServers,
    fileProblem,
    pool,
    catalog,
    state,
    optimization,
    toolsets,
    discoveryRecords,
    oauthRecords,
    equipped: kept.equipped,
    clients: kept.clients,
    store,
    replicaId: options.replicaId ?? nanoid(),
    close,
  };
}
