// Meta-tools that read the catalog or call into it: discover-all-tools and call-tool.
import * as z from 'zod';
import type { CatalogTool } from '../../catalog/index.js';
import { resolveCatalogName } from '../../registry/index.js';
import { LoadoutError } from '../../shared/index.js';
import { clientRequestOf, forwardToolCall } from '../forward.js';
import { textResult } from '../toolResults.js';
import { defineMetaTool } from './metaTool.js';
import { unknownToolError } from './unknownTool.js';

const DESCRIPTION_WIDTH = 140;

/** discover-all-tools: the catalog, optionally ranked by a query. */
export const discoverAllTools = defineMetaTool({
  name: 'discover-all-tools',
  description:
    'Search every tool behind loadout: server.tool and one line each. query ranks, server filters, detail:true adds schemas.',
  input: z.strictObject({
    query: z.string().max(500).optional(),
    server: z.string().optional(),
    limit: z.number().int().min(1).max(500).default(50),
    offset: z.number().int().min(0).default(0),
    detail: z.boolean().default(false),
  }),
  example: { query: 'read a file', limit: 10 },
  async run(args, { gateway, session }) {
    await gateway.ready();
    await gateway.retryAuthorized();
    const catalog = gateway.catalog.current;
    if (args.server !== undefined && !gateway.pool.config(args.server)) {
      const known = gateway.pool.serverNames.join(', ') || '(none configured)';
      throw new LoadoutError('SERVER_NOT_FOUND', `Server '${args.server}' is not configured; servers: ${known}`);
    }
    const { total, tools } = catalog.search(args);
    const exposedIds = new Map([...(await session.settledSnapshot()).routes].map(([name, route]) => [route.id, name]));
    if (args.detail) {
      return textResult(JSON.stringify({ total, offset: args.offset, tools: tools.map((tool) => detailOf(tool, exposedIds.get(tool.id))) }, null, 1));
    }
    const lines: string[] = [];
    const shown = tools.length ? `showing ${args.offset + 1}–${args.offset + tools.length}` : 'none on this page';
    lines.push(`${total} tool${total === 1 ? '' : 's'}${args.query ? ` matching "${args.query}"` : ''} (${shown}).${exposedIds.size ? ' * = equipped.' : ''}`);
    for (const tool of tools) lines.push(`${exposedIds.has(tool.id) ? '* ' : ''}${tool.id} — ${oneLine(tool.description)}`);
    for (const [server, error] of gateway.discoveryFailures()) lines.push(`! ${server}: not discovered (${oneLine(error)})`);
    if (args.offset + tools.length < total) lines.push(`More: offset=${args.offset + tools.length}.`);
    lines.push('Next: build-toolset {"name": "…", "tools": ["server.tool", …], "equip": true}.');
    return lines.join('\n');
  },
});

/** call-tool: reach any enabled catalog tool, equipped or not. */
export const callTool = defineMetaTool({
  name: 'call-tool',
  description:
    'Call any catalog tool by server.tool or equipped name; use it when equipped tools are missing from your list.',
  input: z.strictObject({
    tool: z.string().min(1),
    arguments: z.record(z.string(), z.unknown()).optional(),
  }),
  example: { tool: 'memory.read_graph', arguments: {} },
  async run(args, { gateway, session, extra }) {
    const equipped = (await session.settledSnapshot()).routes.get(args.tool);
    if (equipped) return forwardToolCall(gateway.pool, equipped, args.arguments, clientRequestOf(extra, session.server));
    await gateway.ready();
    let catalog = gateway.catalog.current;
    let tool = resolveCatalogName(catalog, args.tool, gateway.naming);
    if (!tool) {
      // The tool may belong to a server the user has just logged in to.
      await gateway.retryAuthorized();
      catalog = gateway.catalog.current;
      tool = resolveCatalogName(catalog, args.tool, gateway.naming);
    }
    if (!tool) throw unknownToolError(gateway, catalog, args.tool);
    if (!tool.enabled) throw new LoadoutError('TOOL_DISABLED', `${tool.id} is disabled in servers.yaml (enabled: false); it cannot be called.`);
    return forwardToolCall(gateway.pool, { server: tool.server, tool: tool.name, id: tool.id }, args.arguments, clientRequestOf(extra, session.server));
  },
});

function detailOf(tool: CatalogTool, exposedName: string | undefined): Record<string, unknown> {
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

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > DESCRIPTION_WIDTH ? `${line.slice(0, DESCRIPTION_WIDTH - 1)}…` : line || '(no description)';
}
