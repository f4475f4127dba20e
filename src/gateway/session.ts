// One client session: an MCP Server (low-level, so downstream JSON Schemas pass through
// byte-for-byte) with its own exposed-tool registry. Answers tools/list from the registry
// snapshot, hands every call to its router (calls/callRouter.ts), and announces every change
// with exactly one list_changed. Over modern (2026-07-28) HTTP a session is one request's binding
// of a Server to an equipped set it does not own: the caller's principal's (SharedEquipment,
// principalToolsets.ts).
import { setTimeout as delay } from 'node:timers/promises';
import type { CallToolRequest, CallToolResult, RequestId, Server, Tool, Transport } from '@modelcontextprotocol/server';
import { ToolRegistry, alwaysLoaded, type RegistryChange, type RegistrySnapshot, type Selection } from '../registry/index.js';
import { LOADOUT_VERSION, eraOfVersion, errorMessage, lazySchemaValidator } from '../shared/index.js';
import { ALL_TOOLSET } from '../toolsets/index.js';
import { APPS_EXTENSION } from '../catalog/index.js';
import { CallRouter } from './calls/index.js';
import type { GatewayContext } from './context.js';
import { ClientIntake, DirectCalls } from './calls/index.js';
import { CONTENT_CAPABILITIES, serveContent } from './content/index.js';
import type { RequestExtra } from './calls/index.js';
import type { HubMember } from './sessionHub.js';
import { TASK_CAPABILITIES, serveTasks } from './calls/index.js';
import { PassthroughCallServer } from './calls/index.js';
import { RelistLearning } from './relistHabit.js';
import { followRevocations } from './revocation.js';
import { OpenApps } from './openApps.js';
import { listedMetaTool, type MetaTool, type MetaToolSession } from './metaTools/index.js';

/** Identity loadout presents to its clients. */
export const SERVER_INFO = { name: 'loadout', version: LOADOUT_VERSION } as const;

// The same for every session (the SDK's Server copies what it is given before adding to it).
const SESSION_CAPABILITIES = { tools: { listChanged: true }, ...CONTENT_CAPABILITIES, ...TASK_CAPABILITIES };

/**
 * A long-lived equipped set that sessions serve without owning it: it announces and remembers its
 * own changes, and its holder keeps it current with the catalog.
 */
export interface SharedEquipment {
  readonly registry: ToolRegistry;
  /** Its identity for the hub (owner of its tasks); the sessions serving it never join the hub with it. */
  readonly member: HubMember;
  /** The Apps open on it: a request that opens one and the View's calls after it may come on different sessions. */
  readonly openApps: OpenApps;
  equip(name: string): Promise<RegistryChange>;
  unequip(): Promise<RegistryChange>;
}

/** Options of a GatewaySession. */
export interface SessionOptions {
  /**
   * With `shared`, the session serves that set, and neither joins the hub nor watches the catalog:
   * the set's holder does (a modern HTTP request builds one per request).
   */
  readonly shared?: SharedEquipment;
  /**
   * Whether the client can hear a tools list_changed now (default: always). An HTTP client hears
   * one only on its GET stream, a 2026-07-28 stdio client only on a listen stream that asked for
   * it. An equip does not wait for a re-read the client was never told to make.
   */
  readonly hearsToolChanges?: () => boolean;
  /**
   * Told of each equip or unequip (the toolset's name, or null) before it takes effect; a failure
   * stops it, the set unchanged. A 2025 HTTP session with a team store records its set there, so
   * any replica serves it (http/sharedSessions.ts).
   */
  readonly onEquip?: (toolset: string | null) => Promise<void>;
}

/** A client session of the gateway. */
export class GatewaySession implements MetaToolSession {
  readonly server: Server;
  readonly registry: ToolRegistry;
  /** This session as the shared notification hub sees it. */
  readonly member: HubMember;
  /** The Apps this session has open, whose Views' calls it routes (openApps.ts). */
  readonly openApps: OpenApps;
  /** The calls this session answers by forwarding them, past its Server (clientIntake.ts). */
  readonly directCalls: DirectCalls;
  readonly #context: GatewayContext;
  readonly #router: CallRouter;
  readonly #hearsToolChanges: () => boolean;
  readonly #metaListing: readonly Tool[];
  // Equips holding their answer for the client's re-read; woken with whether it came.
  readonly #relistWaiters = new Set<(relisted: boolean) => void>();
  /** What this session's client does after a tools list_changed (relistHabit.ts). */
  readonly relisting: RelistLearning;
  // Relist waiters to wake when the answer to a tools/list (by request id) has been written.
  readonly #wakeOnAnswer = new Map<RequestId, () => void>();
  readonly #unsubscribe: Array<() => void> = [];
  #closed: Promise<void> | undefined;
  readonly #shared: SharedEquipment | undefined;
  readonly #onEquip: ((toolset: string | null) => Promise<void>) | undefined;

  /**
   * `instructions`: what the session's initialize answer tells the client (how to use loadout, the
   * map of servers).
   */
  constructor(context: GatewayContext, metaTools: MetaToolSet, instructions: string, options: SessionOptions = {}) {
    const { shared } = options;
    this.#context = context;
    this.relisting = new RelistLearning(
      () => this.server.getClientVersion()?.name,
      context.clients.of(() => this.server.getClientVersion()),
    );
    this.#router = new CallRouter({
      context,
      metaTools: metaTools.byName,
      session: this,
      clientName: () => this.server.getClientVersion()?.name,
    });
    this.#hearsToolChanges = options.hearsToolChanges ?? (() => true);
    this.#metaListing = metaTools.listing;
    this.#shared = shared;
    this.#onEquip = options.onEquip;
    this.registry = shared?.registry ?? newToolRegistry(context);
    this.openApps = shared?.openApps ?? new OpenApps();
    this.server = new PassthroughCallServer(
      SERVER_INFO,
      {
        capabilities: SESSION_CAPABILITIES,
        instructions,
        jsonSchemaValidator: lazySchemaValidator(),
      },
      (transport) => this.#intake(transport),
    );
    this.directCalls = new DirectCalls({
      server: this.server,
      services: context,
      serverInfo: SERVER_INFO,
      telemetry: context.telemetry,
      directAnswer: (method, params) => this.#router.direct(method, params),
      onSendError: (error) => context.logger.debug({ mod: 'gateway', err: errorMessage(error) }, 'could not answer a forwarded call'),
      onAnswered: (id) => {
        const wake = this.#wakeOnAnswer.get(id);
        this.#wakeOnAnswer.delete(id);
        wake?.();
      },
    });
    this.server.setRequestHandler('tools/list', (_request, extra) => this.#listTools(extra.mcpReq.id));
    this.member = shared?.member ?? {
      servers: () => this.registry.snapshot.servers,
      send: (notification) => {
        if (this.#closed || !this.server.transport) return;
        this.server
          .notification(notification)
          .catch((error: unknown) => context.logger.debug({ mod: 'gateway', err: errorMessage(error) }, 'notification not sent'));
      },
      // The SDK's stdio entry binds a session's Server to 2026-07-28 when its client opens in it.
      servesModernEra: () => eraOfVersion(this.server.getNegotiatedProtocolVersion()) === 'modern',
    };
    serveContent(this.server, context, this);
    serveTasks(this.server, context, this.member);
    this.server.setRequestHandler('tools/call', (request, extra) => this.#router.call(request.params, extra));
    if (shared) return;
    // An App opened changes what a host that declared the extension is listed (#viewTools).
    this.#unsubscribe.push(
      this.openApps.onOpen(() => {
        if (this.#viewTools(this.registry.snapshot).length) void this.server.sendToolListChanged().catch(() => undefined);
      }),
    );
    this.#unsubscribe.push(context.hub.join(this.member));
    // Its subscriptions and tasks end with the grant they were made under.
    this.#unsubscribe.push(followRevocations(context, this.member));
    // A new catalog (discovery, config reload, promotion) may change what this session exposes.
    this.#unsubscribe.push(context.catalog.onChange(() => void this.refresh()));
  }

  /**
   * Serve the client on `transport`, through the session's intake (clientIntake.ts): calls to
   * equipped tools are forwarded from there; the Server answers everything else, including a
   * call that arrives before start-up discovery has settled the exposed set.
   */
  connect(transport: Transport): Promise<void> {
    return this.server.connect(transport);
  }

  // The Server connects through this, however it is connected (see PassthroughCallServer).
  #intake(transport: Transport): ClientIntake {
    return new ClientIntake(transport, this.directCalls.routing, this.directCalls);
  }

  /** Whether the client has shown it never re-reads tools/list (see MetaToolSession). */
  get equippedToolsUnlisted(): boolean {
    return this.relisting.neverRelists;
  }

  /** Whose searches search learns from (see MetaToolSession): the shared set's, when it serves one. */
  get searcher(): object {
    return this.#shared ?? this;
  }

  /** The rate-limit refusal a tools/call of `params` would get now, recorded, counting nothing (CallRouter.limitRefusal). */
  limitRefusal(params: CallToolRequest['params'], requestId: RequestId): Promise<Error | undefined> {
    return this.#router.limitRefusal(params, requestId);
  }

  /** call-tool's call of any catalog tool, routed like every other call (callRouter.ts). */
  callAnyTool(tool: string, args: Record<string, unknown> | undefined, extra: RequestExtra): Promise<CallToolResult> {
    return this.#router.callAny(tool, args, extra);
  }

  /** A tools/call as the client would send it, routed like every other (MetaToolSession.callAsClient). */
  callAsClient(name: string, args: Record<string, unknown>, extra: RequestExtra): Promise<CallToolResult> {
    return this.#router.call({ name, arguments: args }, extra);
  }

  /** Whether close() has been called. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** The current exposed set. */
  get snapshot(): RegistrySnapshot {
    return this.registry.snapshot;
  }

  /**
   * The exposed set once start-up discovery has settled. On a cold start (no cached catalog) a
   * restored toolset's tools exist only after discovery has listed them; a list, call or status
   * read before then waits for discovery and the refresh it triggers instead of missing them.
   */
  async settledSnapshot(): Promise<RegistrySnapshot> {
    // Starts loading the catalog on first use; an idle list is answered before that file read completes.
    const ready = this.#context.ready();
    if (!this.registry.snapshot.selection) return this.registry.snapshot;
    await ready;
    await this.registry.runExclusive(() => Promise.resolve());
    return this.registry.snapshot;
  }

  /**
   * Equip a saved toolset (or `all`) and, if the listed tools changed, announce it and wait for
   * the client to re-read tools/list so the tools are usable on its very next turn.
   */
  async equip(name: string, options: { announce?: boolean; remember?: boolean } = {}): Promise<RegistryChange> {
    if (this.#shared) return this.#shared.equip(name);
    const selection = await toolsetSelection(this.#context, name);
    await this.#onEquip?.(selection.toolset);
    const change = await this.registry.equip(selection);
    // list_changed goes out before the last stop is kept (state.json: lock + atomic write; or the store): the agent waits
    // on the new list; the remembered toolset only matters at the next start.
    await Promise.all([
      options.announce !== false ? this.#announceContent(change) : undefined,
      change.changed && options.announce !== false ? this.#announce(true) : undefined,
      options.remember !== false ? this.#rememberSelection() : undefined,
    ]);
    return change;
  }

  /** Withdraw the equipped toolset (announced and awaited like equip, with the same options). */
  async unequip(options: { announce?: boolean; remember?: boolean } = {}): Promise<RegistryChange> {
    if (this.#shared) return this.#shared.unequip();
    await this.#onEquip?.(null);
    const change = await this.registry.unequip();
    await Promise.all([
      options.announce !== false ? this.#announceContent(change) : undefined,
      change.changed && options.announce !== false ? this.#announce(true) : undefined,
      options.remember !== false ? this.#rememberSelection() : undefined,
    ]);
    return change;
  }

  /** Rebuild against the current catalog and health; announce (without waiting) if it changed. */
  async refresh(): Promise<void> {
    try {
      const change = await this.registry.refresh();
      await Promise.all([this.#announceContent(change), change.changed ? this.#announce(false) : undefined]);
    } catch (error) {
      this.#context.logger.error({ mod: 'gateway', err: errorMessage(error) }, 'refreshing exposed tools failed');
    }
  }

  /** Stop listening for changes and close the MCP server. Runs once. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      for (const unsubscribe of this.#unsubscribe) unsubscribe();
      for (const wake of this.#relistWaiters) wake(true);
      // What this session learned of its client is kept before the process may end.
      await this.relisting.remembered();
      await this.server.close().catch(() => undefined);
    })();
    return this.#closed;
  }

  // Concurrent equips finish their state writes in any order, so each write records what the
  // registry holds when it runs (under the file lock), not what its own equip asked for: the
  // last write then always names the exposed toolset. A state file that cannot be written costs
  // only the memory across restarts, not the equip that already happened.
  async #rememberSelection(): Promise<void> {
    try {
      await this.#context.lastStop.write(() => this.registry.snapshot.selection?.toolset ?? null);
    } catch (error) {
      this.#context.logger.warn({ mod: 'gateway', err: errorMessage(error) }, 'could not remember the equipped toolset');
    }
  }

  async #listTools(id: RequestId): Promise<{ tools: Tool[] }> {
    // Equips waiting for this re-read registered before their swap, so the snapshot read below
    // is theirs. They are woken once this response has been written (onAnswered), so the client
    // holds the new list before it sees the equip answer.
    const waiting = [...this.#relistWaiters];
    const snapshot = await this.settledSnapshot();
    this.relisting.listed();
    if (waiting.length) this.#wakeOnAnswer.set(id, () => waiting.forEach((wake) => wake(true)));
    return { tools: [...this.#metaListing, ...snapshot.tools, ...this.#viewTools(snapshot)] };
  }

  // A host that declared the Apps extension is also listed its open Apps' tools under their own
  // names (openApps.ts): some forward a View's call only by a name they have listed.
  #viewTools(snapshot: RegistrySnapshot): Tool[] {
    if (this.server.getClientCapabilities()?.extensions?.[APPS_EXTENSION] === undefined) return [];
    const taken = new Set([...this.#metaListing.map((tool) => tool.name), ...snapshot.routes.keys()]);
    return this.openApps.viewTools(this.#context.catalog.current, taken);
  }

  // One prompts and one resources list_changed per change that altered what this session lists.
  async #announceContent(change: RegistryChange): Promise<void> {
    if (this.#closed || !this.server.transport) return;
    const sent: Array<Promise<void>> = [];
    if (change.promptsChanged) sent.push(this.server.sendPromptListChanged());
    if (change.resourcesChanged) sent.push(this.server.sendResourceListChanged());
    for (const result of await Promise.allSettled(sent)) {
      if (result.status === 'rejected')
        this.#context.logger.debug({ mod: 'gateway', err: errorMessage(result.reason) }, 'list_changed not sent');
    }
  }

  async #announce(waitForRelist: boolean): Promise<void> {
    if (this.#closed || !this.server.transport) return;
    if (await this.relisting.recall())
      this.#context.logger.debug(
        { mod: 'gateway', client: this.server.getClientVersion(), relist: this.relisting.habit },
        "client's re-list habit taken from its earlier sessions",
      );
    let wait: Promise<boolean> | undefined;
    // Held only for a client that re-reads while it waits (relistHabit.ts): others would wait in vain.
    if (waitForRelist && this.#context.settings.relist_wait_ms > 0 && this.#hearsToolChanges() && this.relisting.holdsAnswers) {
      // Registered before sending, because a fast client re-lists before send() resolves.
      wait = new Promise<boolean>((resolve) => {
        const wake = (relisted: boolean): void => {
          clearTimeout(timer);
          this.#relistWaiters.delete(wake);
          resolve(relisted);
        };
        const timer = setTimeout(() => wake(false), this.#context.settings.relist_wait_ms);
        timer.unref();
        this.#relistWaiters.add(wake);
      });
    }
    // A change the client cannot hear (no listen or GET stream) says nothing of whether it re-reads.
    if (this.#hearsToolChanges()) this.relisting.announced();
    try {
      await this.server.sendToolListChanged();
    } catch (error) {
      this.#context.logger.debug({ mod: 'gateway', err: errorMessage(error) }, 'list_changed not sent');
      return;
    }
    if (!wait) return;
    const relisted = await wait;
    // Woken by close(): the client neither re-read nor failed to.
    if (this.#closed) return;
    this.relisting.released(relisted);
    await this.relisting.remembered();
    if (relisted && this.relisting.settleMs > 0) await delay(this.relisting.settleMs, undefined, { ref: false });
  }
}

/**
 * Before a remembered toolset is equipped again (a start, a set's first read of its file): its
 * tools come from the cached catalog, loaded here, and the servers the cache lacks join it after
 * the discovery this starts, without waiting for it.
 */
export async function loadCachedCatalog(context: GatewayContext): Promise<void> {
  void context.ready();
  await context.catalog.ensureLoaded();
}

/** What equipping the saved toolset `name` (or `all`) selects; throws TOOLSET_NOT_FOUND for an unknown one. */
export async function toolsetSelection(context: GatewayContext, name: string): Promise<Selection> {
  if (name === ALL_TOOLSET) return { toolset: ALL_TOOLSET, toolIds: 'all' };
  const toolset = await context.toolsets.get(name);
  return { toolset: toolset.name, toolIds: toolset.tools, ...(toolset.prompts ? { promptIds: toolset.prompts } : {}) };
}

/** An empty exposed-tool registry built from the current catalog and server health. */
export function newToolRegistry(context: GatewayContext): ToolRegistry {
  return new ToolRegistry(
    { catalog: () => context.catalog.current, isServerAvailable: (server) => context.isServerAvailable(server) },
    context.naming,
  );
}

/** The tools/list entries of the meta-tools, computed once. */
export function listMetaTools(metaTools: readonly MetaTool[]): Tool[] {
  return metaTools.map((tool) => alwaysLoaded(listedMetaTool(tool)));
}

/**
 * The meta-tools a session serves, by name, and their tools/list entries. Built once per list and
 * shared by every session serving it: a modern HTTP request builds a session, and need not build these.
 */
export interface MetaToolSet {
  readonly byName: ReadonlyMap<string, MetaTool>;
  readonly listing: readonly Tool[];
}

/** The MetaToolSet of `metaTools`. */
export function metaToolSet(metaTools: readonly MetaTool[]): MetaToolSet {
  return { byName: new Map(metaTools.map((tool) => [tool.name, tool])), listing: listMetaTools(metaTools) };
}
