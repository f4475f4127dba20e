// Meta-tools that read the catalog or call into it: discover-all-tools and call-tool.
import * as z from 'zod';
import { rank, type Catalog, type CatalogTool } from '../../catalog/index.js';
import { enabledServerNames, serverProblemText, type ServerProblem } from '../../config/index.js';
import { LoadoutError, oneLine } from '../../shared/index.js';
import { discoveryStateText } from '../../runtime/index.js';
import { textResult } from '../toolResults.js';
import { mapAnswer } from './catalogMap.js';
import { READS_ONLY, REACHES_ANY_TOOL, defineMetaTool, type MetaToolSession } from './metaTool.js';
import type { GatewayContext } from '../context.js';
import { toolSignatures } from './toolSignatures.js';
import { toolPurpose } from './toolPurpose.js';

const DESCRIPTION_WIDTH = 140;
const RANKED_PAGE = 10;
const LISTED_PAGE = 50;
const PARAMS_SHOWN = 6;
const SERVER_PURPOSE_WIDTH = 60;

/** discover-all-tools: the catalog, optionally ranked by a query. */
export const discoverAllTools = defineMetaTool({
  name: 'discover-all-tools',
  annotations: READS_ONLY,
  description:
    'Search every tool behind loadout: server.tool and one line each. query ranks (top 10 by default; a blank one is no query), server filters, and together they rank within one server ({"query": "create issue", "server": "github"}); detail:true adds schemas, types:true run-code signatures; no arguments: the servers.',
  input: z.strictObject({
    query: z.string().max(500).optional(),
    server: z.string().optional(),
    limit: z.number().int().min(1).max(500).optional(),
    offset: z.number().int().min(0).default(0),
    detail: z.boolean().default(false),
    types: z.boolean().optional(),
  }),
  example: { query: 'read a file', limit: 10 },
  async run(args, { gateway, session }) {
    await gateway.ready();
    await gateway.discovery.retryAuthorized();
    const catalog = gateway.catalog.current;
    checkServer(gateway, args.server);
    const ranked = Boolean(args.query?.trim());
    // Nothing asked of a catalog too big for one page: the map of the servers, not the first page
    // of the first servers' tools. A smaller catalog is listed whole, which names the servers too.
    const asksNothing =
      !ranked && args.server === undefined && args.limit === undefined && args.offset === 0 && !args.detail && !args.types;
    if (asksNothing && catalog.visible().length > LISTED_PAGE) {
      return mapAnswer(await gateway.catalog.serverMap());
    }
    const { total, tools, strong } = await foundTools(gateway, session, args);
    if (args.types) return toolSignatures(tools, { total, offset: args.offset });
    const exposedIds = new Map([...(await session.settledSnapshot()).routes].map(([name, route]) => [route.id, name]));
    if (args.detail) {
      return textResult(
        JSON.stringify({ total, offset: args.offset, tools: tools.map((tool) => detailOf(tool, exposedIds.get(tool.id))) }, null, 1),
      );
    }
    const lines: string[] = [];
    // Tools of a server not discovered yet cannot be found: say so, never a bare "no match".
    // A server with a problem (an invalid entry, an unset variable) is told by it, with its fix:
    // its discovery's failure and a "loadout refresh" would say less and fix nothing.
    const problems = gateway.catalog.serverProblems({ brief: true });
    const undiscovered = gateway.catalog.undiscoveredServers.filter((server) => !problems.has(server));
    const states = gateway.discovery.states().filter((state) => !problems.has(state.server));
    const stateLines = states.map((state) => `! ${discoveryStateText(state)}`);
    const explained = new Set(states.map((state) => state.server));
    // Counted as the instructions list them: the enabled servers and the entries left out.
    const configured = enabledServerNames(gateway.pool.configs).length + [...problems.values()].filter(isInvalidEntry).length;
    const missing = undiscovered.length || problems.size ? notDiscoveredText(undiscovered, problems, explained, configured) : undefined;
    if (missing && !catalog.visible().length) return [`No tools yet: ${missing}`, ...stateLines].join('\n');
    const shown = tools.length ? `showing ${args.offset + 1}–${args.offset + tools.length}` : 'none on this page';
    const equipped = exposedIds.size ? ' * = equipped.' : '';
    // A ranked answer does not count its matches: nearly every tool shares some word with a query.
    if (!ranked) lines.push(`${total} tool${total === 1 ? '' : 's'} (${shown}).${equipped}`);
    else if (total === 0) lines.push(`No tool matches "${args.query}".`);
    else lines.push(`Best matches for "${args.query}" (${shown}).${equipped}`);
    if (missing) lines.push(missing);
    if (ranked && total > 0 && !strong) {
      const servers = [...new Set(catalog.visible().map((tool) => tool.server))].join(', ');
      lines.push(
        `No tool matches this strongly; these are the closest. To browse instead, list one server's tools: discover-all-tools {"server": "NAME"} (servers: ${servers || 'none'}).`,
      );
    }
    const apart = distinctions(catalog, tools);
    for (const tool of tools) {
      const line = ranked ? compactLine(tool) : `${tool.id} — ${summary(toolPurpose(tool.description))}`;
      lines.push(`${exposedIds.has(tool.id) ? '* ' : ''}${line}${apart.get(tool.id) ?? ''}`);
    }
    lines.push(...stateLines);
    if (args.offset + tools.length < total) lines.push(`More: offset=${args.offset + tools.length}.`);
    lines.push('Next: build-toolset {"name": "…", "tools": ["server.tool", …], "equip": true}.');
    return lines.join('\n');
  },
});

/** What a search of the catalog asks: discover-all-tools's arguments, or a script's search(). */
export interface ToolQuery {
  readonly query?: string;
  readonly server?: string;
  readonly limit?: number;
  readonly offset: number;
}

/** A `server` filter that names no configured server is refused, naming those that are. */
export function checkServer(gateway: GatewayContext, server: string | undefined): void {
  if (server === undefined || gateway.pool.config(server)) return;
  const known = enabledServerNames(gateway.pool.configs).join(', ') || '(none configured)';
  throw new LoadoutError('SERVER_NOT_FOUND', `Server '${server}' is not configured; servers: ${known}`);
}

/** The page of tools a search lists: ranked by its query when it has one, else in catalog order. */
export async function foundTools(
  gateway: GatewayContext,
  session: MetaToolSession,
  args: ToolQuery,
): Promise<{ total: number; tools: CatalogTool[]; strong: boolean }> {
  const ranked = Boolean(args.query?.trim());
  const limit = args.limit ?? (ranked ? RANKED_PAGE : LISTED_PAGE);
  if (!ranked) return gateway.catalog.current.search({ ...args, limit });
  const searchStartedMs = performance.now();
  const { total, hits, strong } = await rank(gateway.catalog, { ...args, query: args.query!, limit, searcher: session.searcher });
  gateway.telemetry.searched({ durationS: (performance.now() - searchStartedMs) / 1000, query: args.query!, resultCount: hits.length });
  return { total, tools: hits.map((hit) => hit.tool), strong };
}

/** call-tool: reach any enabled catalog tool, equipped or not. */
export const callTool = defineMetaTool({
  name: 'call-tool',
  annotations: REACHES_ANY_TOOL,
  description: 'Call any catalog tool by server.tool or equipped name; use it when equipped tools are missing from your list.',
  input: z.strictObject({
    tool: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).optional(),
  }),
  example: { tool: 'memory.read_graph', arguments: {} },
  run(args, { session, extra }) {
    return session.callAnyTool(args.tool, args.arguments, extra);
  },
});

/**
 * `2 of 5 servers are not discovered (a, b). The user can run "loadout refresh" …`. A server with
 * a `!` line of its own (`explained`: why, and when it is tried again) is not named twice; one
 * with a problem gets a line of its own with the fix, which no refresh is.
 */
function notDiscoveredText(
  undiscovered: readonly string[],
  problems: ReadonlyMap<string, ServerProblem>,
  explained: ReadonlySet<string>,
  configured: number,
): string {
  const count = undiscovered.length + problems.size;
  const one = count === 1;
  const unexplained = undiscovered.filter((server) => !explained.has(server));
  const below = unexplained.length < undiscovered.length ? `see the ! line${undiscovered.length === 1 ? '' : 's'} below` : '';
  // With problems listed, every server is named: "see the ! line below" would read as theirs.
  const which = problems.size
    ? [...problems.keys(), ...undiscovered].join(', ')
    : [unexplained.join(', '), below].filter(Boolean).join('; ');
  const head = `${count} of ${configured} server${configured === 1 ? '' : 's'} ${one ? 'is' : 'are'} not discovered (${which}).`;
  const fixes = [...problems].map(([server, problem]) => `${serverProblemText(server, problem)} (the user's to fix; no refresh will)`);
  // Named when problems are listed too, so "it" cannot be read as one of those.
  const subject = problems.size ? undiscovered.join(', ') : undiscovered.length === 1 ? 'it' : 'them';
  const refresh = undiscovered.length
    ? ` The user can run "loadout refresh" in a terminal to discover ${subject} and see why ${undiscovered.length === 1 ? 'it fails' : 'they fail'}.`
    : '';
  return [head + refresh, ...fixes].join('\n');
}

function isInvalidEntry(problem: ServerProblem): boolean {
  return problem.code === 'CONFIG_INVALID';
}

/** A tool's whole definition, as detail:true and a script's search() give it. */
export function detailOf(tool: CatalogTool, exposedName: string | undefined): Record<string, unknown> {
  const { definition } = tool;
  return {
    tool: tool.id,
    ...(exposedName ? { equippedAs: exposedName } : {}),
    ...(definition.title ? { title: definition.title } : {}),
    description: tool.description,
    inputSchema: definition.inputSchema,
    ...(definition.outputSchema ? { outputSchema: definition.outputSchema } : {}),
    ...(definition.annotations ? { annotations: definition.annotations } : {}),
  };
}

/** `server.tool — first sentence (params: a, b?)`, optional parameters marked with `?`. */
function compactLine(tool: CatalogTool): string {
  const schema = tool.definition.inputSchema as { properties?: Record<string, unknown>; required?: unknown } | undefined;
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  const names = Object.keys(schema?.properties ?? {});
  const params = names.slice(0, PARAMS_SHOWN).map((name) => (required.has(name) ? name : `${name}?`));
  if (names.length > PARAMS_SHOWN) params.push('…');
  return `${tool.id} — ${summary(toolPurpose(tool.description))}${params.length ? ` (params: ${params.join(', ')})` : ''}`;
}

/**
 * For tools of different servers on one page whose lines would read the same (filesystem's and
 * desktop-commander's move_file), what tells them apart: each one's server and what it is for.
 */
function distinctions(catalog: Catalog, tools: readonly CatalogTool[]): Map<string, string> {
  const byPurpose = new Map<string, CatalogTool[]>();
  for (const tool of tools) {
    const key = toolPurpose(tool.description).toLowerCase();
    if (key) byPurpose.set(key, [...(byPurpose.get(key) ?? []), tool]);
  }
  const notes = new Map<string, string>();
  for (const group of byPurpose.values()) {
    if (new Set(group.map((tool) => tool.server)).size < 2) continue;
    for (const tool of group) {
      const purpose = catalog.serverSummaries().get(tool.server)?.purpose;
      notes.set(
        tool.id,
        ` [same text as on ${group.length - 1} other server${group.length > 2 ? 's' : ''}; ${tool.server}${purpose ? ` is for ${oneLine(purpose, SERVER_PURPOSE_WIDTH)}` : ''}]`,
      );
    }
  }
  return notes;
}

function summary(text: string): string {
  return oneLine(text, DESCRIPTION_WIDTH) || '(no description)';
}
