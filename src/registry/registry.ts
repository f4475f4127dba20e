// The registry of exposed tools for one client session. Changes (equip, unequip, refresh after
// a catalog or health change) run one at a time under a lock; each builds a complete new
// snapshot and swaps it in whole, so tools/list reads a consistent set without the lock.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { Mutex } from 'async-mutex';
import { isDeepStrictEqual } from 'node:util';
import type { Catalog, CatalogTool } from '../catalog/index.js';
import { assignExposedNames } from './flatten.js';

/** Where a call to an exposed name goes. */
export interface Route {
  readonly server: string;
  /** The downstream tool name. */
  readonly tool: string;
  /** `server.tool`. */
  readonly id: string;
}

/** What the session has asked to expose: a saved toolset's tool ids, or every enabled tool. */
export interface Selection {
  readonly toolset: string;
  readonly toolIds: readonly string[] | 'all';
}

/** Why a selected tool is not exposed. */
export type WithheldReason = 'unknown' | 'disabled' | 'changed' | 'unavailable';

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
}

/** Result of a registry change. */
export interface RegistryChange {
  /** Whether the listed tools differ from before (and so a list_changed is due). */
  readonly changed: boolean;
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

const EMPTY: RegistrySnapshot = Object.freeze({ selection: null, tools: [], routes: new Map(), withheld: [] });

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
      return { changed: !sameTools(previous.tools, next.tools), snapshot: next };
    });
  }

  #build(selection: Selection | null): RegistrySnapshot {
    if (!selection) return EMPTY;
    const catalog = this.#source.catalog();
    const exposed: CatalogTool[] = [];
    const withheld: WithheldTool[] = [];
    const candidates: Array<CatalogTool | string> = selection.toolIds === 'all' ? [...catalog.visible()] : selection.toolIds.map((id) => catalog.get(id) ?? id);
    const seen = new Set<string>();
    for (const candidate of candidates) {
      if (typeof candidate === 'string') {
        withheld.push({ id: candidate, reason: 'unknown' });
        continue;
      }
      if (seen.has(candidate.id)) continue;
      seen.add(candidate.id);
      if (!candidate.enabled) withheld.push({ id: candidate.id, reason: candidate.blocked ? 'changed' : 'disabled' });
      else if (!this.#source.isServerAvailable(candidate.server)) withheld.push({ id: candidate.id, reason: 'unavailable' });
      else exposed.push(candidate);
    }
    const names = assignExposedNames(
      exposed.map((tool) => tool.id),
      this.#naming.maxNameLength,
      this.#naming.reservedNames,
    );
    const tools: Tool[] = [];
    const routes = new Map<string, Route>();
    for (const tool of exposed) {
      const name = names.get(tool.id)!;
      tools.push(exposedDefinition(tool, name));
      routes.set(name, Object.freeze({ server: tool.server, tool: tool.name, id: tool.id }));
    }
    return Object.freeze({ selection, tools, routes, withheld });
  }
}

/** The definition to list: the downstream one untouched except its name and (if promoted) description. */
export function exposedDefinition(tool: CatalogTool, name: string): Tool {
  const promoted = tool.description !== (tool.definition.description ?? '');
  return promoted ? { ...tool.definition, name, description: tool.description } : { ...tool.definition, name };
}

function sameTools(a: readonly Tool[], b: readonly Tool[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((tool, index) => isDeepStrictEqual(tool, b[index]));
}
