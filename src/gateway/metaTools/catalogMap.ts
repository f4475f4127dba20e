// The map of the catalog as the agent reads it: in the session's instructions (its first answer)
// and as the answer of discover-all-tools with no query, under a heading that says how to read it,
// so the agent knows which servers exist and can pass `server` instead of guessing; first, while
// servers.yaml does not parse, the notice that says so.
import { LISTED_MAP_BUDGET_BYTES, MAP_BUDGET_BYTES, serverMapOf, type ServerMapEntry } from '../../catalog/index.js';
import type { GatewayContext } from '../context.js';
import { fileNoticeLine } from './fileNotice.js';

const INSTRUCTIONS =
  'loadout fronts many MCP servers. Find tools with discover-all-tools ({"query": "what you want to do"} ranks them, ' +
  '{"server": "NAME"} lists one server\'s), save a set with build-toolset, then equip-toolset to use them as normal tools ' +
  '(or call any catalog tool with call-tool). ' +
  'Many calls, loops, big results: script them with run-code. ' +
  'Some clients show these names with _ for - (discover_all_tools, call_tool): the same tools.';

// How to read the map's lines: one per server, or servers grouped by what they are for (so that
// "code: github gitlab" does not read as a server named code).
const GROUPED_HEADING = 'Servers by what they are for (group: server names):';

/** The session's instructions: how to use loadout, then the map of its servers. */
export async function sessionInstructions(gateway: Pick<GatewayContext, 'catalog' | 'logger'>): Promise<string> {
  const entries = await gateway.catalog.serverMap().catch((error: unknown) => {
    gateway.logger.warn({ mod: 'gateway', err: String(error) }, 'instructions without the server map');
    return [];
  });
  const notice = fileNoticeLine(gateway.catalog);
  const text = notice === undefined ? INSTRUCTIONS : `${notice}\n${INSTRUCTIONS}`;
  if (!entries.length) return text;
  const { lines, grouped } = serverMapOf(entries);
  return `${text}\n${grouped ? GROUPED_HEADING : 'Servers (tools: what for):'}\n${lines.join('\n')}`;
}

/** discover-all-tools {}: a header, then the map; however many servers, it names them all (up to about 800). */
export function mapAnswer(entries: readonly ServerMapEntry[]): string {
  const tools = entries.reduce((sum, entry) => sum + (entry.summary?.tools ?? 0), 0);
  const header =
    `${entries.length} server${entries.length === 1 ? '' : 's'}, ${tools} tool${tools === 1 ? '' : 's'}. ` +
    'Search them: discover-all-tools {"query": "what you want to do"}; list one server\'s: {"server": "NAME"}.';
  // Notes about the catalog as a whole (nothing discovered yet, what to run) go between the header and the map.
  const { lines, grouped } = serverMapOf(entries, MAP_BUDGET_BYTES, LISTED_MAP_BUDGET_BYTES);
  return [header, ...(grouped ? [GROUPED_HEADING] : []), ...lines].join('\n');
}
