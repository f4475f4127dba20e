// The catalog: every tool of every configured server, as immutable entries built from cached
// definitions, the servers.yaml switchboard and promoted descriptions. A new catalog is built on
// any change; nothing here is mutated in place.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig } from '../config/index.js';
import type { DefinitionCache } from './definitionCache.js';
import { CatalogSearch, type SearchOptions } from './search.js';
import { toolHash } from './toolHash.js';

/** One downstream tool as loadout knows it. */
export interface CatalogTool {
  /** Namespaced name, `server.tool`. */
  readonly id: string;
  readonly server: string;
  /** The downstream tool name. */
  readonly name: string;
  /** The definition exactly as the server listed it. */
  readonly definition: Readonly<Tool>;
  /** The description to show: a promoted one if any, else the server's. */
  readonly description: string;
  /** False when switched off in servers.yaml (`enabled: false` on the tool), or changed and blocked. */
  readonly enabled: boolean;
  /** True when the definition differs from the one approved in servers.yaml (`hash`). */
  readonly changed: boolean;
}

/** Inputs of a catalog build. */
export interface CatalogSources {
  configs: Readonly<Record<string, ServerConfig>>;
  definitions: DefinitionCache;
  /** Promoted descriptions by tool id. */
  descriptionOverrides?: ReadonlyMap<string, string>;
  /** Treat changed tools as disabled (`gateway.block_changed_tools`). */
  blockChangedTools?: boolean;
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

/** An immutable view of all known tools. */
export class Catalog {
  readonly #byId: ReadonlyMap<string, CatalogTool>;
  readonly #visible: readonly CatalogTool[];
  readonly #discoveredServers: ReadonlySet<string>;
  #search: CatalogSearch<CatalogTool> | undefined;

  private constructor(tools: CatalogTool[], discoveredServers: Set<string>) {
    this.#byId = new Map(tools.map((tool) => [tool.id, tool]));
    this.#visible = tools.filter((tool) => tool.enabled);
    this.#discoveredServers = discoveredServers;
  }

  /** Build from config + cached definitions; only enabled servers contribute tools. */
  static build(sources: CatalogSources): Catalog {
    const tools: CatalogTool[] = [];
    const discovered = new Set<string>();
    for (const [server, config] of Object.entries(sources.configs)) {
      const cached = sources.definitions[server];
      if (!config.enabled || !cached) continue;
      discovered.add(server);
      for (const definition of cached.tools) {
        const id = toolId(server, definition.name);
        const setting = config.tools?.[definition.name];
        const changed = setting?.hash !== undefined && setting.hash !== toolHash(definition);
        tools.push(
          Object.freeze({
            id,
            server,
            name: definition.name,
            definition,
            description: sources.descriptionOverrides?.get(id) ?? definition.description ?? '',
            enabled: setting?.enabled !== false && !(changed && sources.blockChangedTools),
            changed,
          }),
        );
      }
    }
    return new Catalog(tools, discovered);
  }

  /** A tool by namespaced name, enabled or not. */
  get(id: string): CatalogTool | undefined {
    return this.#byId.get(id);
  }

  /** Every enabled tool, in config order. */
  visible(): readonly CatalogTool[] {
    return this.#visible;
  }

  /** Whether the catalog holds definitions for this server. */
  hasServer(server: string): boolean {
    return this.#discoveredServers.has(server);
  }

  /** Enabled tools ranked by relevance to `query` (or all, in order, without one). */
  search(options: SearchOptions): { total: number; tools: CatalogTool[] } {
    return this.#index().search(options);
  }

  /** Up to `limit` enabled tool ids that look like `name` (for "did you mean"). */
  suggest(name: string, limit = 5): string[] {
    return this.#index().suggest(name, limit);
  }

  // The full-text index costs time to build, so it waits for the first query.
  #index(): CatalogSearch<CatalogTool> {
    this.#search ??= new CatalogSearch(this.#visible);
    return this.#search;
  }
}
