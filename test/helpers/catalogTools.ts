// Catalog tools for unit tests of search and ranking: an enabled, unchanged tool built from the
// few fields a test cares about.
import type { Tool } from '@modelcontextprotocol/server';
import type { CatalogTool } from '../../src/catalog/index.js';

/** What a test may set of a tool's definition beyond its name and description. */
type ToolExtras = Partial<Pick<Tool, 'inputSchema' | 'title' | 'annotations'>>;

/** The tool `server.name`, enabled and unchanged, with an empty object schema unless given one. */
export function catalogTool(server: string, name: string, description: string, extras: ToolExtras = {}): CatalogTool {
  const definition: Tool = { name, description, inputSchema: { type: 'object' }, ...extras };
  return { id: `${server}.${name}`, server, name, description, definition, enabled: true, changed: false, blocked: false };
}
