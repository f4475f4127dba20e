// The Apps (MCP Apps extension) a session has open, and where a View's call goes. A View calls
// its server's tools by the server's own names, which the host forwards on loadout's connection;
// a server's App is open once the session has read one of its `ui://` resources or called its
// UI tool, and a call by a name no exposed tool has then reaches the open App's server that has
// a tool of that name. Two such servers: an error naming both, never a guess.
import type { Catalog, CatalogTool } from '../catalog/index.js';
import { isAppCallable } from '../catalog/index.js';
import { LoadoutError } from '../shared/index.js';

/** Where a View's call goes: the tool of an open App's server, or undefined when no open App has one of that name. */
export type AppCall = { readonly tool: CatalogTool } | undefined;

/** One session's open Apps, by server. */
export class OpenApps {
  readonly #servers = new Set<string>();

  /** The session has `server`'s App open (it read its View or called its UI tool). */
  open(server: string): void {
    this.#servers.add(server);
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
