// What naming earns a tool beyond its word matches. A query that names a server (its key, its
// title, or another name of the product) wants that server's tools: they are lifted above look-alikes
// of other servers. And a tool whose own name says the request's action and object
// (`create_item` for "create item on board") is lifted above its neighbours that only mention them.
import type { CatalogTool } from './catalogTool.js';
import { contentWordsOf, isStopWord, stem, wordsOf } from './searchText.js';
import { namesServer, type NamingQuery, type ServerNames } from './serverNaming.js';

/** Shares added to a fused score; 0 turns a boost off. */
export interface NameBoostSettings {
  /** For a tool of a server the query names. */
  server: number;
  /**
   * The least share of a tool's name the query must say (two words at least) for the tool to
   * move up to the top of its server's tools; above 1 turns it off.
   */
  name: number;
}

export const DEFAULT_NAME_BOOSTS: NameBoostSettings = { server: 0.5, name: 1 };

// Words of server names and titles that name no product: "loadout-mcp-server", "GitHub MCP Server".
const GENERIC_SERVER_WORDS = new Set([
  'mcp',
  'server',
  'servers',
  'api',
  'official',
  'tool',
  'tools',
  'client',
  'integration',
  'model',
  'context',
  'protocol',
]);

/** The boosts over one list of tools; each tool's name words are worked out on first need. */
export class NameBoosts {
  readonly #tools: readonly CatalogTool[];
  /** Server → the stems it is named by (key, title). */
  readonly #serverTerms = new Map<string, ReadonlySet<string>>();
  /** Server → its names (key, title), each as its words in order. */
  readonly #serverNames = new Map<string, ServerNames>();
  readonly #nameTerms: (ReadonlySet<string> | undefined)[];

  /** `serverNames`: each server's names (its key, its title), by server. */
  constructor(tools: readonly CatalogTool[], serverNames: (server: string) => readonly string[]) {
    this.#tools = tools;
    this.#nameTerms = new Array<ReadonlySet<string> | undefined>(tools.length);
    for (const { server } of tools) {
      if (this.#serverTerms.has(server)) continue;
      const names = serverNames(server)
        .map((name) => contentWordsOf(name).filter((word) => !GENERIC_SERVER_WORDS.has(word)))
        .filter((words) => words.length);
      this.#serverNames.set(server, names);
      this.#serverTerms.set(server, new Set(names.flat().map(stem)));
    }
  }

  /**
   * The servers the query names: by a word it uses as a name (see serverNaming.ts), or by a stem of
   * `more` (other names of the products it says, the user's synonyms) that is no ordinary word.
   */
  namedServers(
    query: NamingQuery,
    terms: ReadonlySet<string>,
    more: ReadonlySet<string>,
    ordinary: (word: string) => boolean,
  ): { named: Set<string>; mentioned: Set<string> } {
    const named = new Set<string>();
    const mentioned = new Set<string>();
    for (const [server, names] of this.#serverNames) {
      if (namesServer(query, server, names, ordinary) || names.some((name) => name.some((word) => more.has(stem(word)) && !ordinary(word))))
        named.add(server);
      else if ([...this.#serverTerms.get(server)!].some((term) => terms.has(term))) mentioned.add(server);
    }
    return { named, mentioned };
  }

  /** The factor a tool's fused score is multiplied by when its server is named. */
  serverFactor(tool: number, named: ReadonlySet<string>, settings: NameBoostSettings): number {
    return named.has(this.#tools[tool]!.server) ? 1 + settings.server : 1;
  }

  /**
   * How much of a tool's name the query says (0–1), when it says at least two of its words (an
   * action and an object); 0 otherwise.
   */
  nameSaid(tool: number, terms: ReadonlySet<string>): number {
    const name = this.#nameTermsOf(tool);
    let said = 0;
    for (const term of name) if (terms.has(term)) said++;
    return said >= 2 ? said / name.size : 0;
  }

  // A tool's name words less its server's own (`linear_create_issue` says create, issue).
  #nameTermsOf(tool: number): ReadonlySet<string> {
    let terms = this.#nameTerms[tool];
    if (!terms) {
      const { name, server } = this.#tools[tool]!;
      const own = this.#serverTerms.get(server);
      terms = new Set(
        wordsOf(name, { whole: false })
          .filter((word) => !isStopWord(word))
          .map(stem)
          .filter((term) => !own?.has(term)),
      );
      this.#nameTerms[tool] = terms;
    }
    return terms;
  }
}
