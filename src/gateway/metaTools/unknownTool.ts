// The error for a tool name that is not routed: a name the catalog does not know (a server that
// could not be started is named with its reason, else the closest real names), told apart from a
// real tool that is only not in the equipped toolset.
import type { Catalog } from '../../catalog/index.js';
import { parseToolId, unusableReason } from '../../catalog/index.js';
import { resolveCatalogName } from '../../registry/index.js';
import { LoadoutError } from '../../shared/index.js';
import type { GatewayContext } from '../context.js';
import { discoveryStateText, retryText } from '../../runtime/index.js';

/** Why `name` is not in the catalog, as a LoadoutError the agent can act on. */
export function unknownToolError(gateway: GatewayContext, catalog: Catalog, name: string): LoadoutError {
  const server = parseToolId(name)?.server;
  const brokenProblem = server === undefined ? undefined : gateway.catalog.brokenServerProblem(server);
  if (brokenProblem !== undefined)
    return new LoadoutError('CONFIG_INVALID', `Server '${server}' is left out: its entry in servers.yaml is invalid (${brokenProblem}).`);
  const state = server === undefined ? undefined : gateway.discovery.state(server);
  if (state?.state === 'pending') {
    return new LoadoutError('TOOL_NOT_FOUND', `No tool '${name}' is known yet: ${discoveryStateText(state)} Call again in a moment.`);
  }
  if (state?.state === 'failed') {
    const { code, text } = state.record.failure;
    if (code === 'NEEDS_AUTHORIZATION') {
      return new LoadoutError('NEEDS_AUTHORIZATION', `${text}; its tools are unknown until then. Call again after logging in.`);
    }
    // It started and answered tools/list with an error: the message names the server's fault and the fix.
    if (code === 'LIST_FAILED') return new LoadoutError('LIST_FAILED', `${text} (discovery ${retryText(state.record)}).`);
    return new LoadoutError(
      'SERVER_START_FAILED',
      `Server '${state.server}' could not be started, so its tools are unknown (discovery ${retryText(state.record)}); ` +
        `fix its entry in ${gateway.paths.serversFile} or what it needs. ${text}`,
    );
  }
  const suggestions = catalog.suggest(name);
  const hint = suggestions.length ? ` Did you mean: ${suggestions.join(', ')}?` : ' Search with discover-all-tools.';
  return new LoadoutError('TOOL_NOT_FOUND', `No tool '${name}' in the catalog.${hint}`);
}

/** Why a tools/call for `name` (not a meta-tool, not equipped) cannot be forwarded, and the fix. */
export async function unroutedToolMessage(gateway: GatewayContext, name: string): Promise<string> {
  await gateway.ready();
  const catalog = gateway.catalog.current;
  const tool = resolveCatalogName(catalog, name, gateway.naming);
  if (!tool) return unknownToolError(gateway, catalog, name).message;
  if (!tool.enabled) return `Tool '${name}' (${tool.id}) is ${unusableReason(tool)}; it cannot be called.`;
  return (
    `Tool '${name}' exists (${tool.id}) but is not in the equipped toolset. Equip a toolset that contains it ` +
    `(build-toolset, then equip-toolset), or call it now with call-tool {"tool": "${tool.id}", "arguments": {…}}.`
  );
}
