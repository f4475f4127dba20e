// The Apps (MCP Apps extension) a session has open, and where a View's call goes. A View calls
// its server's tools by the server's own names, which the host forwards on loadout's connection;
// a server's App is open once the session has read one of its `ui://` resources or called its
// UI tool, and a call by a name no exposed tool has then reaches the open App's server that has
// a tool of that name. Two such servers: an error naming both, never a guess. For a host that
// forwards a View's call only by a name it has listed (Cursor), those tools are listed under
// their own names too, marked as the App's (viewTools).
import type { Tool } from '@modelcontextprotocol/server';
import type { Catalog, CatalogTool } from '../catalog/index.js';
import { isAppCallable } from '../catalog/index.js';
import { LoadoutError } from '../shared/index.js';

/** Where a View's call goes: the tool of an open App's server, or undefined when no open App has one of that name. */
export type AppCall = { readonly tool: CatalogTool } | undefined;

/** One session's open Apps, by server. */
export class OpenApps {
  readonly #servers = new Set<string>();
  readonly #listeners = new Set<() => void>();

  /** The session has `server`'s App open (it read its View or called its UI tool); listeners hear of a newly opened one. */
  open(server: string): void {
    if (this.#servers.has(server)) return;
    this.#servers.add(server);
    for (const listener of this.#listeners) listener();
  }

  /** Hear of each App opened from now on; returns the unsubscribe. */
  onOpen(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * The tools a View may call under their servers' own names, as listed to a host that declared
   * the extension: each open App's server's enabled tools a View may call, whose name no other
   * open App's server has (that call is refused, so not listed) and `taken` (the exposed and
   * meta-tools' names) does not hold. Each is marked `visibility: ["app"]`: it is the View's
   * door, and the model has the tool under its exposed name already (or must not have it).
   */
  viewTools(catalog: Catalog, taken: ReadonlySet<string>): Tool[] {
    const byName = new Map<string, CatalogTool[]>();
    for (const tool of catalog.enabled())
      if (this.#servers.has(tool.server) && isAppCallable(tool.definition) && !taken.has(tool.name))
        byName.set(tool.name, [...(byName.get(tool.name) ?? []), tool]);
    return [...byName.values()].flatMap((tools) => (tools.length === 1 ? [asViewTool(tools[0]!.definition)] : []));
  }

  /**
   * The tool a View's call by its server's own name `name` reaches, in `catalog` (the principal's
   * view: a tool the policy hides is not there). Throws a LoadoutError when two open Apps'
   * servers have it, or when its visibility leaves Views out.
   */
  resolve(catalog: Catalog, name: string): AppCall {
    if (this.#servers.size === 0) return undefined;
    const found = [...this.#servers].flatMap((server) => {
      const tool = catalog.get(`${server}.${name}`);
      return tool?.enabled ? [tool] : [];
    });
    if (found.length > 1)
      throw new LoadoutError(
        'TOOL_AMBIGUOUS',
        `Tool '${name}' is on more than one open App's server (${found.map((tool) => tool.server).join(', ')}); call it by its exposed name instead.`,
      );
    const [tool] = found;
    if (tool && !isAppCallable(tool.definition))
      throw new LoadoutError(
        'TOOL_NOT_FOR_APPS',
        `Tool '${tool.id}' is not for Apps: its visibility (_meta.ui.visibility) leaves out "app".`,
      );
    return tool && { tool };
  }
}

// The definition under its own name, marked as the App's alone.
function asViewTool(definition: Tool): Tool {
  const meta = definition._meta ?? {};
  const ui = typeof meta.ui === 'object' && meta.ui !== null ? meta.ui : {};
  return { ...definition, _meta: { ...meta, ui: { ...ui, visibility: ['app'] } } };
}
