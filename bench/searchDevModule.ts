// loadout's search as a module for the dev set's evaluate.mjs (`init` then `search(query, k)`).
// LOADOUT_SEARCH_SETUP (JSON) overrides parts of the search setup, for the ablation rows.
import { CatalogSearch, type SearchSetup } from '../src/catalog/index.js';
import { catalogToolOf } from './searchDevSet.js';
import type { Tool } from '@modelcontextprotocol/server';

let engine: CatalogSearch | undefined;

/** Build the index over the set's tools. */
export function init({ tools }: { tools: (Tool & { server: string })[] }): void {
  const setup = JSON.parse(process.env.LOADOUT_SEARCH_SETUP ?? '{}') as SearchSetup;
  engine = new CatalogSearch(
    tools.map(({ server, ...definition }) => catalogToolOf(server, stripIds(definition))),
    setup,
  );
}

/** The best `k` tool ids for `query`. */
export function search(query: string, k: number): string[] {
  if (!engine) throw new Error('init was not called');
  return engine.search({ query, limit: k, offset: 0 }).tools.map((tool) => tool.id);
}

// evaluate.mjs adds `id` to each recorded definition; the catalog keeps definitions as listed.
function stripIds(definition: Tool & { id?: string }): Tool {
  const { id: _id, ...rest } = definition;
  return rest;
}
