// Keeps a running gateway in step with its files: applies hand edits of servers.yaml (servers
// added/removed/disabled, tools switched), re-checks a server's tools whenever it connects (so an
// upstream change is marked `changed`), and publishes the runtime file `loadout status` reads.
import { isDeepStrictEqual } from 'node:util';
import type { CatalogStore } from '../catalog/index.js';
import {
  ServersFileWatcher,
  type AuditSettings,
  type GatewaySettings,
  type LimitsSettings,
  type LoadoutPaths,
  type PolicySettings,
  type ServersFile,
} from '../config/index.js';
import type { ServerPool } from '../downstream/index.js';
import { errorMessage, type Logger } from '../shared/index.js';
import type { BackgroundDiscovery } from './backgroundDiscovery.js';
import { RuntimeFile } from './runtimeFile.js';

/** What config sync needs from the gateway. */
interface ConfigSyncOptions {
  paths: LoadoutPaths;
  logger: Logger;
  pool: ServerPool;
  catalog: CatalogStore;
  discovery: BackgroundDiscovery;
  settings: GatewaySettings;
  /** `audit:` as the gateway started with it (a change waits for the next start). */
  audit: AuditSettings;
  /** Adopt the `policy:` of an edited servers.yaml (one that does not parse never gets here). */
  applyPolicy(policy: PolicySettings): void;
  /** Adopt the `limits:` of an edited servers.yaml. */
  applyLimits(limits: LimitsSettings): void;
}

/** A running config sync. */
interface ConfigSync {
  close(): Promise<void>;
}

/** Start watching servers.yaml, re-checking connected servers, and publishing the runtime file. */
export async function startConfigSync(options: ConfigSyncOptions): Promise<ConfigSync> {
  const { paths, logger, pool, catalog } = options;
  const log = logger.child({ mod: 'config' });
  const watcher = new ServersFileWatcher({
    file: paths.serversFile,
    logger,
    cacheFile: paths.parsedServersFile,
    apply: (config, broken) => {
      if (catalog.fileProblem) log.info('servers.yaml parses again; serving it');
      catalog.setFileProblem(undefined);
      return applyConfig(config, broken, options, log);
    },
    // What is served stays as it was: the last good parse, or none if there never was one.
    reject: (problem) => catalog.setFileProblem({ problem, servingLastGood: catalog.fileProblem?.servingLastGood ?? true }),
  });
  await watcher.start();
  const runtime = new RuntimeFile(paths, pool, logger);
  runtime.start();
  const unsubscribe = pool.onEvent((event) => {
    if (event.type !== 'connected') return;
    catalog
      .recheck(event.server)
      .catch((error: unknown) => log.warn({ server: event.server, err: errorMessage(error) }, 're-listing tools after connect failed'));
  });
  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        unsubscribe();
        watcher.close();
        await watcher.settled();
        await runtime.close();
      })();
      return closed;
    },
  };
}

// Loadout's own writes (discovery merges) land here too; the catalog already holds that config,
// so the comparison makes them no-ops instead of a reload loop.
async function applyConfig(
  config: ServersFile,
  brokenServers: ReadonlyMap<string, string>,
  options: ConfigSyncOptions,
  log: Logger,
): Promise<void> {
  const { pool, catalog, discovery, settings, audit } = options;
  if (!isDeepStrictEqual(config.gateway, settings)) log.warn('changes under "gateway:" in servers.yaml take effect at the next start');
  options.applyPolicy(config.policy);
  // A broken entry is said once (at start, or when it breaks): loadout's own write that moved it
  // down a few lines is not news.
  for (const [server, problem] of brokenServers) {
    const known = catalog.brokenServerProblem(server);
    if (known === undefined || withoutPlace(known) !== withoutPlace(problem)) log.error(`${problem}; that server is left out`);
  }
  options.applyLimits(config.limits);
  if (!isDeepStrictEqual(config.audit, audit)) log.warn('changes under "audit:" in servers.yaml take effect at the next start');
  catalog.setBrokenServers(brokenServers);
  if (isDeepStrictEqual(config.servers, pool.configs)) return;
  const before = new Set(Object.keys(pool.configs));
  const after = Object.keys(config.servers);
  log.info(
    { added: after.filter((server) => !before.has(server)), removed: [...before].filter((server) => !(server in config.servers)) },
    'servers.yaml changed; applying',
  );
  await catalog.reload(config.servers);
  discovery.discoverUncached();
}

// A problem without its file:line:col.
function withoutPlace(problem: string): string {
  return problem.replace(/^.*?:\d+:\d+: /, '');
}
