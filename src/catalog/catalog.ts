// The catalog: every tool of every configured server, as immutable entries built from cached
// definitions, the servers.yaml switchboard and promoted descriptions. A new catalog is built on
// any change; nothing here is mutated in place.
import type { ServerConfig } from '../config/index.js';
import type { Grants } from '../identity/index.js';
import { isAppOnly } from './appTools.js';
import type { CatalogTool } from './catalogTool.js';
import type { CachedServerTools, DefinitionCache } from './definitionCache.js';
import { ResourceUriIndex } from './resourceUris.js';
import { CatalogSearch } from './search.js';
import type { RankOptions, Ranking, SearchOptions, SearchResult, SearchSetup } from './searchTypes.js';
import { summarizeServer, type ServerSummary } from './serverMap.js';
import { approvedHash } from './storedApprovals.js';
import { toolHash } from './toolHash.js';

export type { CatalogTool };

/** Why a tool that is not enabled cannot be used, and the fix. */
export function unusableReason(tool: Pick<CatalogTool, 'server' | 'blocked'>): string {
  return tool.blocked
    ? `changed — approve with loadout refresh --accept-changed ${tool.server}`
    : 'disabled in servers.yaml (enabled: false)';
}

/** Inputs of a catalog build. */
interface CatalogSources {
  configs: Readonly<Record<string, ServerConfig>>;
  definitions: DefinitionCache;
  /** Promoted descriptions by tool id. */
  descriptionOverrides?: ReadonlyMap<string, string>;
  /** Treat changed tools as disabled (`gateway.block_changed_tools`). */
  blockChangedTools?: boolean;
  /** How search ranks (vocabulary, vector file, what to do when the vectors are unusable). */
  search?: SearchSetup;
}

/** The namespaced name of a server's tool. */
export function toolId(server: string, tool: string): string {
  return `${server}.${tool}`;
}

/** Split `server.tool` at the first dot (server names cannot contain one). */
export function parseToolId(id: string): { server: string; tool: string } | undefined {
  const dot = id.indexOf('.');
  if (dot <= 0 || dot === id.length - 1) return undefined;
  return { server: id.slice(0, dot), tool: id.slice(dot + 1) };
}

// The most characters of a server's own text searched with each of its tools.
const MAX_SERVER_TEXT = 400;
// A title is a name, not a description: a long one is cut.
const MAX_SERVER_TITLE = 60;

/** Each server's own words (title, description, instructions) searched with its tools, and its title as a name. */
function serverWords(servers: ReadonlyMap<string, CachedServerTools>): { servers: Map<string, string>; serverNames: Map<string, string> } {
  const texts = new Map<string, string>();
  const names = new Map<string, string>();
  for (const [server, { about }] of servers) {
    const text = [about?.title, about?.description, about?.instructions].filter(Boolean).join(' \n ');
    if (text) texts.set(server, text.slice(0, MAX_SERVER_TEXT));
    if (about?.title) names.set(server, about.title.slice(0, MAX_SERVER_TITLE));
  }
  return { servers: texts, serverNames: names };
}

/** The search setup with each server's own words as a field of its tools (replacing any it had: a view keeps what is left). */
function withServerText(setup: SearchSetup, servers: ReadonlyMap<string, CachedServerTools>): SearchSetup {
  const words = serverWords(servers);
  return words.servers.size || setup.vocabulary?.servers ? { ...setup, vocabulary: { ...setup.vocabulary, ...words } } : setup;
}

/** An immutable view of all known tools. */
export class Catalog {
  readonly #byId: ReadonlyMap<string, CatalogTool>;
  readonly #enabled: readonly CatalogTool[];
  /** The enabled tools offered to the model: an App's own tools (isAppOnly) are its View's, never the model's. */
  readonly #visible: readonly CatalogTool[];
  /** The cached definitions of each enabled, discovered server (prompts, resources… beside the tools). */
  readonly #servers: ReadonlyMap<string, Readonly<CachedServerTools>>;
  readonly #searchSetup: SearchSetup;
  #search: CatalogSearch | undefined;
  #resourceUris: ResourceUriIndex | undefined;
  #summaries: Map<string, ServerSummary> | undefined;
  /** What a restricted catalog was restricted to (see restrictedTo). */
  #grants: Grants | undefined;

  private constructor(tools: CatalogTool[], servers: Map<string, CachedServerTools>, searchSetup: SearchSetup = {}) {
    this.#searchSetup = searchSetup;
    this.#byId = new Map(tools.map((tool) => [tool.id, tool]));
    this.#enabled = tools.filter((tool) => tool.enabled);
    this.#visible = this.#enabled.filter((tool) => !isAppOnly(tool.definition));
    this.#servers = servers;
  }

  /** Build from config + cached definitions; only enabled servers contribute tools. */
  static build(sources: CatalogSources): Catalog {
    const tools: CatalogTool[] = [];
    const discovered = new Map<string, CachedServerTools>();
    for (const [server, config] of Object.entries(sources.configs)) {
      const cached = sources.definitions[server];
      if (!config.enabled || !cached) continue;
      discovered.set(server, cached);
      for (const definition of cached.tools) {
        const id = toolId(server, definition.name);
        const setting = config.tools?.[definition.name];
        const approved = approvedHash(cached, config, definition.name);
        const changed = approved !== undefined && approved !== toolHash(definition);
        const blocked = changed && sources.blockChangedTools === true;
        tools.push(
          Object.freeze({
            id,
            server,
            name: definition.name,
            definition,
            description: sources.descriptionOverrides?.get(id) ?? definition.description ?? '',
            enabled: setting?.enabled !== false && !blocked,
            changed,
            blocked,
          }),
        );
      }
    }
    return new Catalog(tools, discovered, withServerText(sources.search ?? {}, discovered));
  }

  /**
   * The catalog as one principal sees it: only what `grants` allows, the rest gone as if it did
   * not exist (a forbidden tool is not found, its server is not on the map). Build it once per
   * catalog and grants (see the gateway's policy views): it is a new catalog, with its own index.
   */
  restrictedTo(grants: Grants): Catalog {
    const tools = [...this.#byId.values()].filter((tool) => grants.tool(tool.server, tool.name));
    const servers = new Map<string, CachedServerTools>();
    for (const [server, cached] of this.#servers) {
      if (!grants.server(server)) continue;
      const resources = grants.resources(server);
      // A server's own words (instructions, description) may name any of its tools.
      const { about, ...definitions } = cached;
      servers.set(server, {
        ...(grants.wholeServer(server) && about ? { ...definitions, about } : definitions),
        tools: cached.tools.filter((tool) => grants.tool(server, tool.name)),
        ...(cached.prompts ? { prompts: cached.prompts.filter((prompt) => grants.prompt(server, prompt.name)) } : {}),
        ...(cached.resources ? { resources: resources ? cached.resources : [] } : {}),
        ...(cached.resourceTemplates ? { resourceTemplates: resources ? cached.resourceTemplates : [] } : {}),
      });
    }
    // The words searched with each tool come from what is left of its server: a server granted in
    // part keeps no instructions, title or description, so none of them ranks its granted tools.
    // A view is never saved: the data dir's one saved index is the whole catalog's.
    const { savedIndex: _whole, ...searchSetup } = this.#searchSetup;
    const view = new Catalog(tools, servers, withServerText(searchSetup, servers));
    view.#grants = grants;
    return view;
  }

  /**
   * Whether `id` is left out of this catalog by its restriction (not merely unknown): a saved
   * toolset may list it, and its reader must not be told it was there.
   */
  conceals(id: string): boolean {
    const parsed = this.#grants ? parseToolId(id) : undefined;
    return parsed !== undefined && !this.#grants!.tool(parsed.server, parsed.tool);
  }

  /** A tool by namespaced name, enabled or not. */
  get(id: string): CatalogTool | undefined {
    return this.#byId.get(id);
  }

  /** Every tool, enabled or not, in config order. */
  all(): Iterable<CatalogTool> {
    return this.#byId.values();
  }

  /** Every enabled tool offered to the model (searched, mapped, resolved by call-tool), in config order: not an App's own tools. */
  visible(): readonly CatalogTool[] {
    return this.#visible;
  }

  /** Every enabled tool, an App's own tools included, in config order: what `all` lists, as the servers list it. */
  enabled(): readonly CatalogTool[] {
    return this.#enabled;
  }

  /** The enabled tools of `server` only its App's View may call, which come along with its UI tool. */
  appOnlyToolsOf(server: string): CatalogTool[] {
    return this.#enabled.filter((tool) => tool.server === server && isAppOnly(tool.definition));
  }

  /** Whether the catalog holds definitions for this server. */
  hasServer(server: string): boolean {
    return this.#servers.has(server);
  }

  /** Enabled, discovered servers, in config order. */
  servers(): string[] {
    return [...this.#servers.keys()];
  }

  /** A server's cached definitions: its prompts, resources, templates and capabilities beside the tools. */
  definitionsOf(server: string): Readonly<CachedServerTools> | undefined {
    return this.#servers.get(server);
  }

  /** Client-facing resource URIs and their owners, over every enabled server's cached resources. */
  get resourceUris(): ResourceUriIndex {
    this.#resourceUris ??= new ResourceUriIndex(this.#servers);
    return this.#resourceUris;
  }

  /** What the map says of each enabled, discovered server: its purpose and its count of enabled tools. */
  serverSummaries(): ReadonlyMap<string, ServerSummary> {
    if (this.#summaries) return this.#summaries;
    const toolsOf = new Map<string, CatalogTool['definition'][]>();
    for (const tool of this.#visible) {
      const list = toolsOf.get(tool.server);
      if (list) list.push(tool.definition);
      else toolsOf.set(tool.server, [tool.definition]);
    }
    this.#summaries = new Map(
      [...this.#servers].map(([server, cached]) => [
        server,
        summarizeServer(server, { about: cached.about, tools: toolsOf.get(server) ?? [] }),
      ]),
    );
    return this.#summaries;
  }

  /** Enabled tools ranked by relevance to `query` (or all, in order, without one). */
  search(options: SearchOptions): SearchResult {
    return this.#index().search(options);
  }

  /** Enabled tools ranked for a query, filtered by server and paged, with reasons when asked. */
  rank(options: RankOptions): Ranking {
    return this.#index().rank(options);
  }

  /** Up to `limit` enabled tool ids that look like `name` (for "did you mean"). */
  suggest(name: string, limit = 5): string[] {
    return this.#index().suggest(name, limit);
  }

  // The full-text index costs time to build, so it waits for the first query.
  #index(): CatalogSearch {
    this.#search ??= new CatalogSearch(this.#visible, this.#searchSetup);
    return this.#search;
  }
}
