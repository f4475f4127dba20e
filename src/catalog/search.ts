// Full-text search over the catalog (minisearch): relevance ranking for discover-all-tools and
// close matches for unknown names.
import MiniSearch from 'minisearch';

const STOP_WORDS = new Set(['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'in', 'into', 'is', 'it', 'of', 'on', 'or', 'the', 'to', 'with']);

/** Paging and filtering for a catalog search. */
export interface SearchOptions {
  query?: string;
  server?: string;
  limit: number;
  offset: number;
}

/** What a search reads of a tool (the catalog's tools, without this file importing the catalog). */
interface IndexedTool {
  id: string;
  server: string;
  name: string;
  description: string;
}

/** An index over a fixed list of tools. */
export class CatalogSearch<Tool extends IndexedTool> {
  readonly #tools: readonly Tool[];
  readonly #byId: ReadonlyMap<string, Tool>;
  readonly #index: MiniSearch<IndexedTool>;

  constructor(tools: readonly Tool[]) {
    this.#tools = tools;
    this.#byId = new Map(tools.map((tool) => [tool.id, tool]));
    this.#index = new MiniSearch<IndexedTool>({
      fields: ['name', 'server', 'description'],
      storeFields: ['server'],
      searchOptions: { boost: { name: 3, server: 2 }, prefix: true, fuzzy: 0.2, combineWith: 'OR' },
      // camelCase and snake_case names become separate words, so "read file" finds readFile.
      // Stop words are dropped: with prefix matching, the "a" of "read a file" matched every
      // tool with a word starting with "a".
      processTerm: (term) => {
        const word = term.toLowerCase();
        return STOP_WORDS.has(word) ? null : word;
      },
      tokenize: (text) => text.replace(/([a-z])([A-Z])/g, '$1 $2').split(/[^\p{L}\p{N}]+/u).filter(Boolean),
    });
    this.#index.addAll(tools.map(({ id, server, name, description }) => ({ id, server, name, description })));
  }

  /** Ranked (with a query) or listed (without) tools, filtered by server and paged. */
  search({ query, server, limit, offset }: SearchOptions): { total: number; tools: Tool[] } {
    let matches: readonly Tool[];
    if (query?.trim()) {
      const hits = this.#index.search(query, server ? { filter: (hit) => hit.server === server } : {});
      matches = hits.map((hit) => this.#byId.get(hit.id as string)!);
    } else {
      matches = server ? this.#tools.filter((tool) => tool.server === server) : this.#tools;
    }
    return { total: matches.length, tools: matches.slice(offset, offset + limit) };
  }

  /** Ids of the tools most like `name` (typos, wrong server, missing prefix). */
  suggest(name: string, limit: number): string[] {
    const hits = this.#index.search(name.replace(/[._-]/g, ' '), { fuzzy: 0.34, prefix: true, combineWith: 'OR' });
    return hits.slice(0, limit).map((hit) => hit.id as string);
  }
}
