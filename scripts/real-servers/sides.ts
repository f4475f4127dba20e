// The two sides of the comparison for one server: its lists read by a client connected to it
// directly, and read through `loadout serve --equip all` configured with that server alone.
import { TOOLSET_META_TOOLS } from '../../src/gateway/index.js';
import { LIST_KINDS, type ListKind } from './compare.js';
import { RawClient, errorText, type ListOutcome, type RawClientOptions } from './rawClient.js';

/** One side's lists; a list the server did not declare is absent. */
export interface SideResult {
  lists: Partial<Record<ListKind, ListOutcome>>;
  /** Through loadout: the downstream tool name → the name loadout lists it under. */
  toolNames?: Map<string, string>;
  /** From spawning the process to the end of its first tools/list. */
  toolsMs?: number;
  /** Set when the side could not be read at all. */
  failure?: string;
  /** What else a fixer needs: loadout's discovery error, its last stderr lines, leftover processes. */
  notes: string[];
}

/** Closes what a side opened; the caller's deadline uses it to stop a side that hangs. */
export type Tracker = (client: RawClient) => void;

/** The server's lists as a client connected straight to it sees them. */
export async function listDirect(options: RawClientOptions, track: Tracker): Promise<SideResult> {
  const startedAt = performance.now();
  let client: RawClient;
  try {
    client = await RawClient.connect(options);
  } catch (error) {
    return { lists: {}, failure: errorText(error), notes: [] };
  }
  track(client);
  const lists: SideResult['lists'] = {};
  const notes: string[] = [];
  let toolsMs: number | undefined;
  try {
    const capabilities = client.capabilities ?? {};
    // Tools are listed whatever the server declared, as loadout does.
    const declared: Record<ListKind, boolean> = {
      tools: true,
      prompts: capabilities.prompts !== undefined,
      resources: capabilities.resources !== undefined,
      resourceTemplates: capabilities.resources !== undefined,
    };
    for (const kind of LIST_KINDS) {
      if (declared[kind]) lists[kind] = await client.list(kind);
      toolsMs ??= performance.now() - startedAt;
    }
  } finally {
    const killed = await client.close();
    if (killed) notes.push(`direct: killed ${killed} leftover process(es)`);
  }
  return { lists, notes, ...(toolsMs === undefined ? {} : { toolsMs }) };
}

const META_TOOL_NAMES: ReadonlySet<string> = new Set(TOOLSET_META_TOOLS.map((tool) => tool.name));

/** The same lists through loadout, every tool equipped, resolved to this one server. */
export async function listThroughLoadout(server: string, options: RawClientOptions, track: Tracker): Promise<SideResult> {
  const startedAt = performance.now();
  let client: RawClient;
  try {
    client = await RawClient.connect(options);
  } catch (error) {
    return { lists: {}, failure: `loadout: ${errorText(error)}`, notes: [] };
  }
  track(client);
  const lists: SideResult['lists'] = {};
  const notes: string[] = [];
  let toolNames: Map<string, string> | undefined;
  let toolsMs: number | undefined;
  try {
    for (const kind of LIST_KINDS) {
      lists[kind] = await client.list(kind);
      toolsMs ??= performance.now() - startedAt;
    }
    toolNames = await equippedNames(client, server);
    const tools = lists.tools;
    if (tools?.ok) {
      const names = toolNames;
      const exposed = new Set(names.values());
      // An MCP App's own tools (visibility ["app"]) are never in discover-all-tools (docs/apps.md),
      // but `all` lists them, under `server_tool`: read back from that name (one whose characters
      // the flattening changed is then reported missing, never passed).
      const prefix = `${server}_`;
      for (const name of tools.items.map(nameOf))
        if (name?.startsWith(prefix) && !exposed.has(name) && !META_TOOL_NAMES.has(name)) names.set(name.slice(prefix.length), name);
      const listed = new Set(names.values());
      // What remains are loadout's own meta-tools.
      lists.tools = { ok: true, items: tools.items.filter((tool) => listed.has(nameOf(tool) ?? '')) };
    }
    const listing = await client.callToolText('discover-all-tools', { server, limit: 1 });
    for (const line of listing.text.split('\n')) if (line.startsWith('! ')) notes.push(`loadout discover-all-tools: ${line.slice(2)}`);
  } catch (error) {
    notes.push(`loadout: ${errorText(error)}`);
  } finally {
    const tail = client.stderrTail(4);
    if (tail) notes.push(`loadout stderr: ${tail}`);
    const killed = await client.close();
    if (killed) notes.push(`loadout: killed ${killed} leftover process(es)`);
  }
  return { lists, notes, ...(toolNames ? { toolNames } : {}), ...(toolsMs === undefined ? {} : { toolsMs }) };
}

// discover-all-tools with detail names each catalog tool (`server.tool`) and the name it is equipped as.
async function equippedNames(client: RawClient, server: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (let offset = 0; ;) {
    const page = await client.callToolText('discover-all-tools', { server, detail: true, limit: 500, offset });
    if (page.isError) throw new Error(`discover-all-tools failed: ${page.text.slice(0, 300)}`);
    const parsed = JSON.parse(page.text) as { total: number; tools: Array<{ tool: string; equippedAs?: string }> };
    for (const tool of parsed.tools) if (tool.equippedAs) names.set(tool.tool.slice(server.length + 1), tool.equippedAs);
    offset += parsed.tools.length;
    if (parsed.tools.length === 0 || offset >= parsed.total) return names;
  }
}

function nameOf(item: unknown): string | undefined {
  const name = typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : undefined;
}
