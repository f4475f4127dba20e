// The registry of exposed tools for one client session. Changes (equip, unequip, refresh after
// a catalog or health change) run one at a time under a lock; each builds a complete new
// snapshot and swaps it in whole, so tools/list reads a consistent set without the lock. The
// snapshot also holds what follows from the tools: the servers the session uses, whose prompts
// and resources it lists (exposedPrompts.ts).
import type { Prompt, Tool } from '@modelcontextprotocol/server';
import { Mutex } from 'async-mutex';
import { isDeepStrictEqual } from 'node:util';
import { isAppOnly, uiResourceUriOf, withUiResourceUri, type Catalog, type CatalogTool } from '../catalog/index.js';
import { scanParamHeaders, type ParamHeader } from '../shared/index.js';
import { alwaysLoaded } from './alwaysLoad.js';
import { assignExposedNames } from './flatten.js';
import { exposePrompts, resourceListsOf, type PromptRoute } from './exposedPrompts.js';

/** Where a call to an exposed name goes. */
export interface Route {
  readonly server: string;
  /** The downstream tool name. */
  readonly tool: string;
  /** `server.tool`. */
  readonly id: string;
  /** Its valid `x-mcp-header` annotations (SEP-2243), when it has any: mirrored downstream, checked on calls received. */
  readonly paramHeaders?: readonly ParamHeader[];
}

/** What the session has asked to expose: a saved toolset's tool ids, or every enabled tool. */
export interface Selection {
  readonly toolset: string;
  readonly toolIds: readonly string[] | 'all';
  /** Prompts the toolset names explicitly (`server.prompt`), beside those of its tools' servers. */
  readonly promptIds?: readonly string[];
}

/** Why a selected tool is not exposed. */
export type WithheldReason = 'unknown' | 'disabled' | 'changed' | 'unavailable' | 'app-only';

/** A selected tool that is not exposed, and why. */
export interface WithheldTool {
  readonly id: string;
  readonly reason: WithheldReason;
}

/** One consistent exposed set. */
export interface RegistrySnapshot {
  readonly selection: Selection | null;
  /** The tool definitions to list, in selection order. */
  readonly tools: readonly Tool[];
  readonly routes: ReadonlyMap<string, Route>;
  readonly withheld: readonly WithheldTool[];
  /**
   * The servers this session uses: those with an exposed tool (every available one under `all`)
   * and those of explicitly named prompts. Their prompts and resources are the session's.
   */
  readonly servers: ReadonlySet<string>;
  /** Prompt definitions to list, under flattened names. */
  readonly prompts: readonly Prompt[];
  readonly promptRoutes: ReadonlyMap<string, PromptRoute>;
  /** The cached resource and template lists of those servers (compared by identity to spot a change). */
  readonly resourceLists: readonly unknown[];
}

/** Result of a registry change. */
export interface RegistryChange {
  /** Whether the listed tools differ from before (and so a list_changed is due). */
  readonly changed: boolean;
  /** Whether the listed prompts differ (a prompts list_changed is due). */
  readonly promptsChanged: boolean;
  /** Whether the session's servers or their cached resources differ (a resources list_changed is due). */
  readonly resourcesChanged: boolean;
  readonly snapshot: RegistrySnapshot;
}

/** What the registry reads to build a snapshot. */
export interface RegistrySource {
  catalog(): Catalog;
  /** False while a server is known to be down (its tools are withdrawn). */
  isServerAvailable(server: string): boolean;
}

/** Naming rules for exposed tools. */
export interface NamingOptions {
  maxNameLength: number;
  /** Names taken by meta-tools. */
  reservedNames: ReadonlySet<string>;
}

const EMPTY: RegistrySnapshot = Object.freeze({
  selection: null,
  tools: [],
  routes: new Map(),
  withheld: [],
  servers: new Set<string>(),
  prompts: [],
  promptRoutes: new Map(),
  resourceLists: [],
});

/** The lock-serialized exposed-tool set of one session. */
export class ToolRegistry {
  readonly #source: RegistrySource;
  readonly #naming: NamingOptions;
  readonly #lock = new Mutex();
  #snapshot: RegistrySnapshot = EMPTY;

  constructor(source: RegistrySource, naming: NamingOptions) {
    this.#source = source;
    this.#naming = naming;
  }

  /** The current exposed set (read without the lock). */
  get snapshot(): RegistrySnapshot {
    return this.#snapshot;
  }

  /** Expose a selection, replacing the previous one. All or nothing. */
  equip(selection: Selection): Promise<RegistryChange> {
    return this.#change(() => selection);
  }

  /** Withdraw every exposed tool. */
  unequip(): Promise<RegistryChange> {
    return this.#change(() => null);
  }

  /** Rebuild the current selection against the current catalog and server health. */
  refresh(): Promise<RegistryChange> {
    return this.#change((current) => current);
  }

  /**
   * Run `task` under the registry lock, after any change in progress. For operations that
   * must not interleave with equips (e.g. deleting the equipped toolset's file).
   */
  runExclusive<T>(task: () => Promise<T>): Promise<T> {
    return this.#lock.runExclusive(task);
  }

  #change(select: (current: Selection | null) => Selection | null): Promise<RegistryChange> {
    return this.#lock.runExclusive(() => {
      const previous = this.#snapshot;
      // Building may throw; the previous snapshot then stays in place untouched.
      const next = this.#build(select(previous.selection));
      this.#snapshot = next;
      return {
        changed: !sameTools(previous.tools, next.tools),
        promptsChanged: !isDeepStrictEqual(previous.prompts, next.prompts),
        resourcesChanged: !sameItems(previous.resourceLists, next.resourceLists),
        snapshot: next,
      };
    });
  }

  #build(selection: Selection | null): RegistrySnapshot {
    if (!selection) return EMPTY;
    const catalog = this.#source.catalog();
    const exposed: CatalogTool[] = [];
    const withheld: WithheldTool[] = [];
    const candidates: Array<CatalogTool | string> =
      selection.toolIds === 'all' ? [...catalog.enabled()] : selection.toolIds.map((id) => catalog.get(id) ?? id);
    const seen = new Set<string>();
    for (const candidate of candidates) {
      if (typeof candidate === 'string') {
        if (!catalog.conceals(candidate)) withheld.push({ id: candidate, reason: 'unknown' });
        continue;
      }
      if (seen.has(candidate.id)) continue;
      seen.add(candidate.id);
      if (!candidate.enabled) withheld.push({ id: candidate.id, reason: candidate.blocked ? 'changed' : 'disabled' });
      else if (!this.#source.isServerAvailable(candidate.server)) withheld.push({ id: candidate.id, reason: 'unavailable' });
      else exposed.push(candidate);
    }
    if (selection.toolIds !== 'all') withAppCompanions(catalog, exposed, withheld);
    const names = assignExposedNames(
      exposed.map((tool) => tool.id),
      this.#naming.maxNameLength,
      this.#naming.reservedNames,
    );
    const tools: Tool[] = [];
    const routes = new Map<string, Route>();
    // A chosen toolset is what the agent is to use now; `all` is a plain proxy, listed as the servers list.
    const chosen = selection.toolIds !== 'all';
    for (const tool of exposed) {
      const name = names.get(tool.id)!;
      const definition = exposedDefinition(catalog, tool, name);
      // An App's own tool is its View's: loading it into the model's context up front would offer it.
      tools.push(chosen && !isAppOnly(tool.definition) ? alwaysLoaded(definition) : definition);
      routes.set(name, routeTo(tool));
    }
    const available = (server: string): boolean => catalog.hasServer(server) && this.#source.isServerAvailable(server);
    const servers = new Set(selection.toolIds === 'all' ? catalog.servers().filter(available) : exposed.map((tool) => tool.server));
    const { prompts, promptRoutes } = exposePrompts(catalog, servers, selection.promptIds ?? [], available, this.#naming.maxNameLength);
    for (const route of promptRoutes.values()) servers.add(route.server);
    return Object.freeze({
      selection,
      tools,
      routes,
      withheld,
      servers,
      prompts,
      promptRoutes,
      resourceLists: resourceListsOf(catalog, servers),
    });
  }
}

/** Where a call of catalog tool `tool` goes, with its valid x-mcp-header annotations. */
export function routeTo(tool: CatalogTool): Route {
  const scan = scanParamHeaders(tool.definition.inputSchema);
  const paramHeaders = scan.valid && scan.headers.length ? { paramHeaders: scan.headers } : {};
  return Object.freeze({ server: tool.server, tool: tool.name, id: tool.id, ...paramHeaders });
}

/**
 * An App's own tools (visibility without `model`) in a chosen set: never there on their own (a
 * toolset naming one without its server's UI tool is refused it), and there, all of them, with
 * any UI tool of their server, so that its View finds them; `exposed` is changed in place.
 */
function withAppCompanions(catalog: Catalog, exposed: CatalogTool[], withheld: WithheldTool[]): void {
  const withUi = new Set(exposed.filter((tool) => uiResourceUriOf(tool.definition) !== undefined).map((tool) => tool.server));
  const kept: CatalogTool[] = [];
  for (const tool of exposed)
    if (!isAppOnly(tool.definition) || withUi.has(tool.server)) kept.push(tool);
    else withheld.push({ id: tool.id, reason: 'app-only' });
  const ids = new Set(kept.map((tool) => tool.id));
  for (const server of withUi) for (const tool of catalog.appOnlyToolsOf(server)) if (!ids.has(tool.id)) kept.push(tool);
  exposed.splice(0, exposed.length, ...kept);
}

/**
 * The definition to list: the downstream one untouched except its name, (if promoted) its
 * description, and a UI tool's View when two servers share its `ui://` URI (then disambiguated).
 */
function exposedDefinition(catalog: Catalog, tool: CatalogTool, name: string): Tool {
  const promoted = tool.description !== (tool.definition.description ?? '');
  const named = promoted ? { ...tool.definition, name, description: tool.description } : { ...tool.definition, name };
  const view = uiResourceUriOf(tool.definition);
  const exposedView = view === undefined ? undefined : catalog.resourceUris.exposedUri(tool.server, view);
  return exposedView === undefined || exposedView === view ? named : withUiResourceUri(named, exposedView);
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((tool, index) => isDeepStrictEqual(tool, b[index]));
}
