// Builds and wires the gateway: the runtime (config → pool → catalog) → health, config sync and
// (per session) registry + meta-tools. A plain function, not a class that owns every subsystem.
import type { ServerEventBus, Transport } from '@modelcontextprotocol/server';
import { serversFileNotice, type AuthSettings, type LoadoutPaths, type ServersFileProblem } from '../config/index.js';
import type { CatalogStore } from '../catalog/index.js';
import type { ServerPool } from '../downstream/index.js';
import { isStoreAway, type TeamStore } from '../store/index.js';
import { openAuditTrail } from '../audit/index.js';
import { FleetLimits, type Principal } from '../identity/index.js';
import { ServerHealth } from '../downstream/index.js';
import { watchPromotions, type OptimizationLoop } from '../optimization/index.js';
import { BackgroundDiscovery, ReplicaHeartbeats, openRuntime, startConfigSync, watchToolListChanges } from '../runtime/index.js';
import { LoadoutError, RecentlyUsed, errorMessage, isLoadoutError, opensLegacyEra, type Logger } from '../shared/index.js';
import { LOADOUT_ATTR, TELEMETRY_OFF, type HiddenFromCaller, type Telemetry } from '../telemetry/index.js';
import { resolveCatalogName } from '../registry/index.js';
import type { GatewayContext } from './context.js';
import { PolicyViews } from './policyViews.js';
import { InputRounds } from './inputRounds.js';
import { keepLastStopCopied, lastStopOf } from './lastStop.js';
import { ClientHabits } from './clientHabits.js';
import { isExposedPromptName, listenedResources } from './content/index.js';
import { ListenSubscriptions, type ListenedResources } from './stdio/index.js';
import { ModernCallPath } from './stdio/index.js';
import { EQUIP_META_TOOLS, META_TOOLS, TOOLSET_META_TOOLS, namingOptions, sessionInstructions } from './metaTools/index.js';
import { ResourceRoutes } from './resourcePages.js';
import { SharedToolsets, type RequestScope } from './principalToolsets.js';
import { watchServerEvents } from './serverEvents.js';
import { GatewaySession, loadCachedCatalog, metaToolSet, type MetaToolSet, type SessionOptions } from './session.js';
import { SessionHub } from './sessionHub.js';
import { StdioOpening } from './stdio/index.js';
import { TaskRoutes } from './taskRoutes.js';

/** Options of createGateway. */
interface GatewayOptions {
  paths: LoadoutPaths;
  logger: Logger;
  /** Toolset to equip in new sessions instead of the remembered one. */
  equip?: string;
  /** Environment for `${VAR}` expansion (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** The team store (`--store`), opened listening; the gateway closes it. Without one, state is in files. */
  store?: TeamStore;
  /** Whether stdout is free for `audit.copy_to: stdout` (serve --http); over stdio it is the protocol. */
  stdoutFree?: boolean;
  /** This replica's id (default: drawn by the runtime); `serve` draws it first, for telemetry's resource. */
  replicaId?: string;
  /** Where the gateway's requests are traced and measured, and its gauges read (`serve`'s); default: off. */
  telemetry?: Telemetry;
}

/** Options of Gateway.connect. */
export type ConnectOptions = Pick<SessionOptions, 'hearsToolChanges' | 'onEquip'> & {
  /** Whose view the session serves (default: `policy.local`, the caller of stdio). */
  principal?: Principal;
  /**
   * A session resumed from its record (another replica started it): equip this toolset (null:
   * none) instead of the remembered one or --equip, and remember nothing.
   */
  resumedToolset?: string | null;
};

/** A running gateway. */
export interface Gateway {
  readonly context: GatewayContext;
  /** The gateway as `principal` may see it (policyViews.ts): its grants (under the groups `principal` names, which every view of it follows from now on), its saved toolsets, its last stop. */
  contextOf(principal: Principal): GatewayContext;
  /** This process's id among the replicas of a fleet (its heartbeat row, audit records, telemetry's service.instance.id). */
  readonly replicaId: string;
  /** The telemetry it was given (off if none): the HTTP server's requests are traced by it too. */
  readonly telemetry: Telemetry;
  /** What `principal`'s policy hides (default: `policy.local`'s): telemetry measures a refused request of it as of an unknown name. */
  hiddenFrom(principal?: Principal): HiddenFromCaller;
  /** `auth:` of servers.yaml as read at start: the authorization server HTTP callers' tokens come from. */
  readonly auth: AuthSettings | undefined;
  /** `gateway.allowed_hosts` of servers.yaml as read at start: Host names serve --http accepts besides its address. */
  readonly allowedHosts: readonly string[];
  /**
   * Create a session, restore its toolset, and connect it to a client transport. The session
   * counts only once connected; if any step fails it is closed again, and the error thrown. It sees
   * what `principal` may (default: `policy.local`, the caller of stdio).
   */
  connect(transport: Transport, options?: ConnectOptions): Promise<GatewaySession>;
  /**
   * Serve one client on a stdio `transport` in either protocol era: its first message selects the
   * era. An initialize (2025) connects the session directly; anything else (2026-07-28's
   * server/discover) goes through the SDK's stdio entry, which serves subscriptions/listen. The
   * session is opened (its toolset restored) while that message arrives; a failure to open it is thrown.
   */
  serveStdio(transport: Transport, onError: (error: Error) => void): Promise<void>;
  /**
   * The session of one modern (2026-07-28) HTTP request, serving the equipped set of `scope` (its
   * principal's, or one toolset endpoint's: principalToolsets.ts), first brought up to date with
   * its file: its Server, its direct calls, its limit check. Built once per request, however many
   * steps of serving it ask (modernHttp.ts). `calledTool`: the tool a tools/call request names.
   * `setNeeded` false (server/discover, ping): a set the store away leaves unknown is no failure.
   */
  requestSession(scope: RequestScope, calledTool?: string, setNeeded?: boolean): Promise<GatewaySession>;
  /** Where the changes of `scope`'s equipped set are published, for its subscriptions/listen streams. */
  requestBus(scope: RequestScope): ServerEventBus;
  /** The resources the listen streams of `scope` name (a modern HTTP listen request holds them while its stream is open). */
  listenedResources(scope: RequestScope): ListenedResources;
  /** Connected client sessions. */
  readonly sessionCount: number;
  /** Close every session and downstream connection. Runs once. */
  close(): Promise<void>;
}

/**
 * Load the config (spawning nothing) and wire the gateway. The cached catalog is read on first
 * need (see BackgroundDiscovery.ready), and then uncached servers are discovered in the background.
 */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { paths, logger } = options;
  const telemetry = options.telemetry ?? TELEMETRY_OFF;
  // A servers.yaml that does not parse never stops a gateway: it serves the last good parse, and says so.
  const runtime = await openRuntime({ ...options, telemetry, lastGoodConfig: true });
  const { config, brokenServers, pool, catalog, state, optimization, toolsets, store, equipped } = runtime;
  // Said once at start, as the config watcher says it on each change: the other servers run.
  for (const problem of brokenServers.values()) logger.error({ mod: 'config' }, `${problem}; that server is left out`);
  if (runtime.fileProblem) logger.error({ mod: 'config' }, serversFileNotice(runtime.fileProblem));
  const policyViews = new PolicyViews(config.policy, config.gateway.principals_in_memory);
  const limits = new FleetLimits(config.limits, { logger, ...(store?.fleet ? { shared: store.fleet.limits } : {}) });
  const audit = await Promise.resolve()
    .then(() =>
      openAuditTrail(config.audit, {
        dataDir: paths.dataDir,
        configDir: paths.configDir,
        logger,
        stdoutFree: options.stdoutFree === true,
        replicaId: runtime.replicaId,
        ...(store?.fleet ? { store: store.fleet.audit } : {}),
        telemetry,
      }),
    )
    .catch(async (error: unknown) => {
      await runtime.close();
      throw error;
    });
  const health = new ServerHealth({
    pool,
    logger,
    pingIntervalMs: config.gateway.health_interval_seconds * 1000,
    reconnectBaseMs: config.gateway.reconnect_base_seconds * 1000,
    reconnectMaxMs: config.gateway.reconnect_max_seconds * 1000,
  });
  const discovery = new BackgroundDiscovery({
    catalog,
    pool,
    logger,
    records: runtime.discoveryRecords,
    oauthRecords: runtime.oauthRecords,
    concurrency: config.gateway.discovery_concurrency,
    // The holder's discovery ends within its timeout; a little more lets its result arrive.
    ...(store
      ? {
          fleet: {
            runExclusive: store.runExclusive.bind(store),
            waitMs: (config.gateway.discovery_timeout_seconds + 5) * 1000,
            // A failure recorded; a success is heard as the catalog's change, once it has reloaded.
            onRecordChange: (listener) =>
              store.onChange((change) => {
                if (change.type === 'change' && change.kind === 'discovery' && change.op === 'put') listener(change.key);
              }),
          },
        }
      : {}),
  });
  // The two watches are independent: set up together, a start waits for one round of file-system calls, not two.
  const [stopPromotionWatch, configSync] = await Promise.all([
    // In store mode promotions are heard on the change bus (followStoredCatalog), not in state.json.
    store ? () => undefined : watchPromotions(optimization, paths.stateFile, logger),
    startConfigSync({
      paths,
      logger,
      pool,
      catalog,
      discovery,
      settings: config.gateway,
      applyPolicy: (policy) => policyViews.update(policy),
      applyLimits: (settings) => limits.update(settings),
      audit: config.audit,
    }),
  ]);
  const tasks = new TaskRoutes();
  const lastStops = { state, equipped, store };
  if (store) keepLastStopCopied(store);
  const hub = new SessionHub({ pool, catalog, tasks, logger });

  const context: GatewayContext = {
    paths,
    settings: config.gateway,
    logger,
    pool,
    catalog,
    toolsets,
    lastStop: lastStopOf(lastStops, policyViews.localPrincipal),
    clients: new ClientHabits(runtime.clients, logger),
    naming: namingOptions(config.gateway),
    optimization,
    discovery,
    ready: () => discovery.ready(),
    isServerAvailable: (server) => health.isAvailable(server),
    resourceRoutes: new ResourceRoutes(),
    hub,
    tasks,
    inputRounds: new InputRounds(logger),
    principal: policyViews.localPrincipal,
    grants: undefined,
    hiddenByPolicy: () => false,
    hiddenContent: () => false,
    audit,
    limits,
    telemetry,
  };
  policyViews.attach(context, (principal) => lastStopOf(lastStops, principal));
  const stopWatchingToolLists = watchToolListChanges(pool, catalog, logger);
  const stopWatchingServers = watchServerEvents(pool, catalog, hub, logger, {
    baseMs: config.gateway.reconnect_base_seconds * 1000,
    maxMs: config.gateway.reconnect_max_seconds * 1000,
  });
  // The toolset equipped at `principal`'s last stop (`loadout toolset equip` for the local caller, or an equip in a session).
  const remembered = (principal: Principal): Promise<string | null> => policyViews.contextFor(principal).lastStop.read();
  const metaTools = config.optimization.expose_tools ? META_TOOLS : TOOLSET_META_TOOLS;
  const metaSet = metaToolSet(metaTools);
  const sessions = new Set<GatewaySession>();
  // A principal with no recorded set starts with what a new session would restore.
  const shared = new SharedToolsets(
    context,
    async (principal) => options.equip ?? (await remembered(principal)),
    (principal) => policyViews.contextFor(principal),
    store,
  );
  // Another replica's discovery or re-check changed the catalog records: read them again.
  const stopHearingCatalog = store ? followStoredCatalog(store, catalog, optimization, pool, logger) : () => undefined;
  telemetry.watchGateway({
    // A 2025-era session holds its own set (it names no principal): they are counted together.
    equippedTools: () => [
      {
        value: [...sessions].reduce((sum, session) => sum + session.registry.snapshot.routes.size, 0),
        attributes: { [LOADOUT_ATTR.principal]: 'sessions' },
      },
      shared.equippedTools(),
    ],
    catalogTools: () => catalog.current.visible().length,
    // The meta-tools' names are reserved: a name is one of them or a catalog tool's, or made up.
    knowsTool: (name) => context.naming.reservedNames.has(name) || resolveCatalogName(catalog.current, name, context.naming) !== undefined,
    knowsPrompt: (name) => isExposedPromptName(catalog.current, name, context.naming.maxNameLength),
    storeListening: () => (store?.fleet ? store.listening : undefined),
  });
  // A toolset endpoint's set never changes: the meta-tools that would change it are not listed
  // there. Computed on its first request, not at every start.
  let fixedMetaSet: MetaToolSet | undefined;
  const fixedMetaTools = () => (fixedMetaSet ??= metaToolSet(metaTools.filter((tool) => !EQUIP_META_TOOLS.has(tool))));
  // Every modern request builds a Server with them: computed once per catalog, while every server
  // is discovered. An undiscovered one may fail with no new catalog to say so, so its line (not
  // discovered yet, or why not) is read again for each request until it is discovered.
  // Each principal's, as its map shows only the servers it may use.
  // Each kept with the servers.yaml problem it was written under, so a break or a fix is said at once.
  const instructions = new RecentlyUsed<string, { fileProblem: ServersFileProblem | undefined; text: Promise<string> }>(
    config.gateway.principals_in_memory,
  );
  const stopInvalidatingInstructions = catalog.onChange(() => instructions.clear());
  const stopFollowingPolicy = policyViews.onChange(() => {
    instructions.clear();
    shared.refreshAll();
  });
  const requestInstructions = (principal: Principal): Promise<string> => {
    let kept = instructions.get(principal.id);
    if (!kept || kept.fileProblem !== catalog.fileProblem) {
      kept = { fileProblem: catalog.fileProblem, text: sessionInstructions(policyViews.contextFor(principal)) };
      instructions.set(principal.id, kept);
    }
    if (catalog.undiscoveredServers.length) instructions.delete(principal.id);
    return kept.text;
  };
  let closed: Promise<void> | undefined;
  // Postgres mode: the replica's row in replica_heartbeats, for `status --store` (on its own timer, off every call's path).
  const heartbeats = store?.fleet
    ? new ReplicaHeartbeats(
        runtime.replicaId,
        store.fleet.replicas,
        { sessions: () => sessions.size, listening: () => store.listening },
        { logger },
      )
    : undefined;
  await heartbeats?.start();
  // An always-on server going down or coming back withdraws or restores its tools in every session.
  health.onChange(() => {
    for (const session of sessions) void session.refresh();
    shared.refreshAll();
  });
  health.start();

  // A session with its toolset restored, not yet connected; closed when its Server closes.
  const open = async (
    principal: Principal,
    sessionOptions?: Pick<SessionOptions, 'hearsToolChanges' | 'onEquip'>,
    resumedToolset?: string | null,
  ): Promise<GatewaySession> => {
    const seen = policyViews.contextFor(principal);
    const session = new GatewaySession(seen, metaSet, await sessionInstructions(seen), sessionOptions);
    session.server.onclose = () => {
      sessions.delete(session);
      void session.close();
    };
    try {
      // A resumed 2025 session keeps its own recorded set; a new one gets --equip or the one remembered.
      if (resumedToolset !== undefined) await restoreToolset(session, seen, resumedToolset, false);
      else await restoreToolset(session, seen, options.equip ?? (await remembered(principal)), options.equip !== undefined);
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  };

  // The session of one modern (2026-07-28) HTTP request: the set of `scope`, up to date with its
  // record. A call of a tool the set routes is served by the set as this process last heard of it
  // (no round trip on the call path); anything else (a list, a meta-tool, a tool not equipped here)
  // asks the record, so a change made through another replica just before is seen, whether or not
  // its notice has arrived: a client with no sticky routing lists what it has just equipped.
  const requestSession = async (scope: RequestScope, calledTool?: string, setNeeded = true): Promise<GatewaySession> => {
    if (closed) throw new LoadoutError('CLOSED', 'loadout is shutting down');
    const asked = calledTool === undefined || !shared.get(scope).registry.snapshot.routes.has(calledTool);
    const current = shared.current(scope, asked).catch((error: unknown) => {
      if (setNeeded || !isStoreAway(error)) throw error;
      return shared.get(scope);
    });
    const [set, text] = await Promise.all([current, requestInstructions(scope.principal)]);
    return new GatewaySession(policyViews.contextFor(scope.principal), scope.kind === 'principal' ? metaSet : fixedMetaTools(), text, {
      shared: set,
    });
  };

  // Connect an opened session to its client's transport.
  const attach = async (session: GatewaySession, transport: Transport): Promise<GatewaySession> => {
    try {
      await session.connect(transport);
      // The gateway may have begun closing, or the client gone (its onclose has run), while this connected.
      if (closed) throw new LoadoutError('CLOSED', 'loadout is shutting down');
      if (session.closed) throw new LoadoutError('CLOSED', 'the client went away while its session was connecting');
    } catch (error) {
      await session.close();
      throw error;
    }
    sessions.add(session);
    return session;
  };

  return {
    context,
    replicaId: runtime.replicaId,
    telemetry,
    hiddenFrom(principal = policyViews.localPrincipal) {
      const seen = policyViews.contextFor(principal);
      return (kind, name) => (kind === 'tool' ? seen.hiddenByPolicy(name) : seen.hiddenContent('prompt', name));
    },
    auth: config.auth,
    allowedHosts: config.gateway.allowed_hosts,
    async serveStdio(transport, onError) {
      const opening = new StdioOpening(transport);
      // A 2026-07-28 client hears a tools list_changed only on a listen stream that asked for it.
      let listening: ListenSubscriptions | undefined;
      const hearsToolChanges = (): boolean => listening?.hearsToolChanges ?? true;
      // The session opens (its toolset restored) while the client's first message is on its way.
      // A stdio client is the one `policy.local` names.
      const [session, first] = await Promise.all([open(policyViews.localPrincipal, { hearsToolChanges }), opening.firstMessage()]);
      if (!first) return void (await session.close());
      // A 2025-era client (it opens with initialize) is connected straight to its session, as
      // before the 2026 era: the SDK's era layer would check every message's shape both ways,
      // about 44 µs more CPU per forwarded call in a profile (docs/performance.md).
      if (opensLegacyEra(first)) return void (await attach(session, opening));
      const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
      // Only a 2026-07-28 client listens, so only the session pinned to it (the first) holds what it names.
      const updates = listenedResources(context, session);
      // Plain calls of equipped tools skip the entry once it has pinned the connection (modernCallPath.ts).
      listening = new ListenSubscriptions(new ModernCallPath(opening, session), {
        hold: (uri) => (session.closed ? Promise.resolve() : updates.hold(uri)),
        release: (uri) => updates.release(uri),
      });
      // The entry asks for a second session only when it drops the first one, which answered a
      // server/discover probe, for a client that then opens with initialize after all.
      let opened: GatewaySession | undefined = session;
      serveStdio(
        async () => {
          const next = opened ?? (await open(policyViews.localPrincipal));
          opened = undefined;
          if (closed) throw new LoadoutError('CLOSED', 'loadout is shutting down');
          sessions.add(next);
          return next.server;
        },
        { transport: listening, onerror: onError },
      );
    },
    async connect(transport, connectOptions) {
      const { principal, resumedToolset, ...sessionOptions } = connectOptions ?? {};
      return attach(await open(principal ?? policyViews.localPrincipal, sessionOptions, resumedToolset), transport);
    },
    contextOf: (principal) => policyViews.contextFor(principal),
    requestSession,
    requestBus(scope) {
      return shared.get(scope).bus;
    },
    listenedResources(scope) {
      return shared.get(scope).listened;
    },
    get sessionCount() {
      return sessions.size;
    },
    close() {
      closed ??= (async () => {
        // The records in memory go to the data dir (the spool, with a store) before anything slow: a
        // close cut short by serve's time cap (children to end, a slow store) must not lose them.
        const auditWritten = audit.flush();
        // First: a replica that is stopping is gone from status at once.
        await heartbeats?.close();
        await health.close();
        // Its record of unanswered servers is written while the children are being ended, not before.
        const discoveryClosed = discovery.close();
        stopPromotionWatch();
        stopWatchingToolLists();
        stopWatchingServers();
        stopInvalidatingInstructions();
        stopFollowingPolicy();
        shared.close();
        await configSync.close();
        context.inputRounds.close();
        await Promise.allSettled([...sessions].map((session) => session.close()));
        stopHearingCatalog();
        await Promise.all([pool.close(), discoveryClosed]);
        // A re-check or learned-words record begun before the pool closed may still be writing.
        await Promise.all([catalog.settled(), auditWritten.then(() => audit.close())]);
        // The pool is closed already; this closes the store, last, once nothing writes to it.
        await runtime.close();
      })();
      return closed;
    },
  };
}

// Re-equip what was equipped at the last stop (or --equip, or a resumed session's own set). Before
// the client connects, so the first tools/list already includes it; a toolset that no longer
// exists is logged, not fatal. `override`: an explicit --equip, which fails the start and is remembered.
async function restoreToolset(session: GatewaySession, context: GatewayContext, name: string | null, override: boolean): Promise<void> {
  if (!name) return;
  await loadCachedCatalog(context);
  try {
    // Re-equipping the remembered toolset need not write state.json (a lock and a write on every start).
    await session.equip(name, { announce: false, remember: override });
  } catch (error) {
    // An explicit --equip that fails stops the start (the CLI prints why); a remembered one is only logged.
    if (!isLoadoutError(error) || override) throw error;
    context.logger.warn({ mod: 'gateway', toolset: name, err: error.message }, 'could not re-equip toolset');
  }
}

// Reads the catalog records again when another replica changed one (or the bus missed changes), and
// the learned search words when another replica learned some (a resync re-reads them with the
// catalog): one read per kind for a burst of notices. Its own writes are heard too: reading them
// back costs one read. A promotion or revert anywhere (an optimization record changed) is applied
// to the catalog's descriptions.
function followStoredCatalog(
  store: TeamStore,
  catalog: CatalogStore,
  optimization: OptimizationLoop,
  pool: ServerPool,
  logger: Logger,
): () => void {
  const reloadCatalog = coalesced(() => catalog.reload(pool.configs), logger, 'could not re-read the catalog from the store');
  const applyPromotions = coalesced(() => optimization.applyPromotions(), logger, 'could not re-read the promotions from the store');
  const rereadLearned = coalesced(() => catalog.rereadLearned(), logger, 'could not re-read the learned search words from the store');
  return store.onChange((change) => {
    if (change.type === 'resync' || change.kind === 'catalog') reloadCatalog();
    if (change.type === 'change' && change.kind === 'learnedWords') rereadLearned();
    if (change.type === 'resync' || change.kind === 'optimization') applyPromotions();
  });
}

// Runs `read` now, or once more after the read in progress when asked meanwhile; a failure is logged.
function coalesced(read: () => Promise<unknown>, logger: Logger, failure: string): () => void {
  let reading: Promise<unknown> | undefined;
  let again = false;
  const run = (): void => {
    if (reading) {
      again = true;
      return;
    }
    reading = read()
      .catch((error: unknown) => logger.warn({ mod: 'catalog', err: errorMessage(error) }, failure))
      .finally(() => {
        reading = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return run;
}
