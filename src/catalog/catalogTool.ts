// The shape of one catalog entry, on its own so that the search files can read tools without
// importing the catalog that builds its search from them.
import type { Tool } from '@modelcontextprotocol/server';

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
  /** True when changed and `gateway.block_changed_tools` withholds it until approved. */
  readonly blocked: boolean;
}
