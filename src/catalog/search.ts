// Catalog search: ranks tools for discover-all-tools by fusing word matches (BM25F over fields)
// with meaning matches (word-vector alignment) by reciprocal rank, and finds close names for
// unknown ones (minisearch, prefix + fuzzy: typos belong there, not in ranking).
import MiniSearch from 'minisearch';
import type { CatalogTool } from './catalogTool.js';
import type { Postings } from './postings.js';
import { searchIndexFingerprint } from './searchIndexFile.js';
import { isQuestion, readsOnly } from './searchIntent.js';
import { replacementNamesOf, saysDeprecated } from './deprecation.js';
import { askedWordsOf, meantWordsOf, queryKeyOf, requestTextOf } from './queryWords.js';
import { sortedScores } from './rankedScores.js';
import { EVERYDAY_PRODUCT_WORDS, PRODUCT_WORDS } from './productNames.js';
import { namingQueryOf } from './serverNaming.js';
import { DEFAULT_NAME_BOOSTS, NameBoosts } from './nameBoosts.js';
import { DEFAULT_FIELD_WEIGHTS, LexicalIndex } from './lexicalIndex.js';
import {
  serverNamesOf,
  stem,
  toolTextOf,
  toolWordsOf,
  withSharedDescriptionsDropped,
  wordOverlap,
  type ToolText,
  type ToolWords,
} from './searchText.js';
import {
  DEFAULT_FUSION,
  type FusionSettings,
  type RankedTool,
  type RankOptions,
  type Ranking,
  type SearchOptions,
  type SearchResult,
  type SearchSetup,
} from './searchTypes.js';
import { DEFAULT_ALIGNMENT, SemanticIndex } from './semanticIndex.js';
import { loadWordVectors, type WordVectors } from './wordVectors.js';

/** The query's stemmed terms (reasons of word matches) and words (reasons of meaning matches). */
interface QueryWords {
  terms: string[];
  all: string[];
}

// A query whose best tool covers less than this share of its (rarity-weighted) words, and aligns
// less than this in meaning, is answered with the weak-match notice. Calibrated on the dev set
// (bench:search prints the row): at 0.5 the notice stood on 12 of 80 answers whose top 3 held the
// right tool; at 0.4 on 3 (3.8 %), while still flagging 21 of the 45 answers that missed.
const STRONG_MATCH = 0.4;
// A remembered query counts for another when this share of their words (stems) is common to both:
// "read the config file" and "read config file" are one query, "read a file" and "write a file" are not.
const NEAR_QUERY = 0.75;
// Rarity of a query word from its corpus-frequency rank: common words ("get", "list") count least.
const RARITY_SCALE = 200;

/** A remembered query (see SearchSetup.recall) with its words as a set. */
interface RememberedQuery {
  key: string;
  words: ReadonlySet<string>;
  tools: ReadonlyMap<string, number>;
}

/** An index over a fixed list of tools. */
export class CatalogSearch {
  readonly #tools: readonly CatalogTool[];
  readonly #setup: SearchSetup;
  readonly #texts: ToolText[];
  /** Each tool's words; dropped once both indexes are built (they are most of a big index's memory). */
  #words: ToolWords[] | undefined;
  readonly #lexical: LexicalIndex;
  /** The saved index's key (see searchIndexFile.ts); undefined without a saved index. */
  readonly #fingerprint: string | undefined;
  /** The meaning index's postings as loaded, until the vectors are (on the first ranked search). */
  #savedSemantic: Postings | undefined;
  readonly #boosts: NameBoosts;
  #semantic: { index: SemanticIndex; vectors: WordVectors } | 'unavailable' | undefined;
  /** Per tool: 1 if it only reads, 0 if it changes things, -1 not yet worked out. */
  readonly #readOnly: Int8Array;
  /** The tools that say they are deprecated, found on the first ranked search. */
  #deprecated: ReadonlySet<number> | undefined;
  #indexById: Map<string, number> | undefined;
  /** The remembered queries' words, split once per index rather than at every search. */
  #remembered: RememberedQuery[] | undefined;
  #suggestions: MiniSearch<{ id: string; name: string; server: string }> | undefined;

  constructor(tools: readonly CatalogTool[], setup: SearchSetup = {}) {
    this.#tools = tools;
    this.#setup = setup;
    this.#texts = withSharedDescriptionsDropped(
      tools,
      tools.map((tool) => toolTextOf(tool, setup.vocabulary)),
    );
    this.#boosts = new NameBoosts(tools, (server) => serverNamesOf(server, setup.vocabulary));
    const fieldWeights = setup.fieldWeights ?? DEFAULT_FIELD_WEIGHTS;
    // Both indexes' postings depend on the texts and the weights alone (the vectors are applied on load).
    this.#fingerprint =
      setup.savedIndex && searchIndexFingerprint(this.#texts, { fieldWeights, aligned: (setup.alignment ?? DEFAULT_ALIGNMENT).fields });
    const saved = this.#fingerprint ? setup.savedIndex?.load(this.#fingerprint, tools.length) : undefined;
    if (saved) {
      this.#lexical = new LexicalIndex(saved.lexical, tools.length);
      this.#savedSemantic = saved.semantic;
    } else {
      this.#words = this.#texts.map(toolWordsOf);
      this.#lexical = LexicalIndex.build(this.#words, fieldWeights);
    }
    this.#readOnly = new Int8Array(tools.length).fill(-1);
  }

  /** Ranked (with a query) or listed (without) tools, filtered by server and paged. */
  search({ query, server, limit, offset, modelScores }: SearchOptions): SearchResult {
    if (!query?.trim()) {
      const matches = server ? this.#tools.filter((tool) => tool.server === server) : this.#tools;
      return { total: matches.length, tools: matches.slice(offset, offset + limit), strong: true, confidence: 1 };
    }
    const { total, hits, strong, confidence } = this.rank({ query, server, limit, offset, modelScores });
    return { total, tools: hits.map((hit) => hit.tool), strong, confidence };
  }

  /**
   * The ranking of a query, filtered by server and paged, with each hit's reasons when asked
   * (`explain`); `words` are what the query searched for, its request-vocabulary words included.
   */
  rank({ query, server, limit, offset, modelScores, explain = false }: RankOptions): Ranking {
    const { ranked, confidence, words } = this.#rank(query, modelScores);
    const matches = server ? ranked.filter((hit) => hit.tool.server === server) : ranked;
    const hits = matches.slice(offset, offset + limit);
    if (explain) this.#addReasons(hits, words);
    return {
      total: matches.length,
      hits,
      strong: confidence >= STRONG_MATCH,
      confidence,
      words: words.all,
      vectors: typeof this.#semantic === 'object',
    };
  }

  /** Ids of the tools most like `name` (typos, wrong server, missing prefix). */
  suggest(name: string, limit: number): string[] {
    this.#suggestions ??= this.#suggestionIndex();
    const hits = this.#suggestions.search(name.replace(/[._-]/g, ' '), { fuzzy: 0.34, prefix: true, combineWith: 'OR' });
    return hits.slice(0, limit).map((hit) => hit.id as string);
  }

  #rank(query: string, modelScores?: ReadonlyMap<string, number>): { ranked: RankedTool[]; confidence: number; words: QueryWords } {
    const { asked, aliases } = askedWordsOf(query);
    const words = [...new Set([...asked, ...aliases, ...asked.flatMap((word) => this.#setup.synonyms?.get(word) ?? [])])];
    const terms = [...new Set(words.map(stem))];
    const semantic = this.#semanticIndex();
    const fusion = this.#setup.fusion ?? DEFAULT_FUSION;
    const meant = meantWordsOf(words, fusion.requestWords);
    const meantTerms = new Map<string, number>();
    for (const word of meant.values())
      for (const term of word.map(stem)) if (!terms.includes(term)) meantTerms.set(term, fusion.requestWords);
    const lexicalScores = this.#lexical.score([...terms, ...meantTerms.keys()], meantTerms);
    const lexical = sortedScores(lexicalScores);
    let aligned: [number, number][] = [];
    let expanded: [number, number][] = [];
    if (semantic !== 'unavailable') {
      aligned = sortedScores(
        semantic.index.score(words, (word) => rarityOf(word, semantic.vectors), {
          of: (word) => meant.get(word) ?? [],
          weight: fusion.requestWords,
        }),
      );
      if (fusion.expanded > 0)
        expanded = sortedScores(
          // BM25F is a sum over terms, linear in each term's weight: the word-match scores plus the
          // added weight of the neighbours are the expanded scores, without scoring every term twice.
          this.#lexical.score(
            ...this.#expansion(semantic.index, words, terms, meantTerms, fusion.expansion),
            Float64Array.from(lexicalScores),
          ),
        );
    }

    const fused = new Map<number, RankedTool>();
    const add = (ranking: [number, number][], weight: number, note?: (hit: RankedTool, rank: number, score: number) => void) =>
      ranking.forEach(([tool, score], rank) => {
        let hit = fused.get(tool);
        if (!hit) fused.set(tool, (hit = { tool: this.#tools[tool]!, score: 0 }));
        hit.score += weight / (fusion.k + rank + 1);
        note?.(hit, rank + 1, score);
      });
    add(lexical, fusion.lexical, (hit, rank, score) => (hit.lexical = { rank, score, matches: [] }));
    add(aligned, fusion.semantic, (hit, rank, score) => (hit.semantic = { rank, score, alignments: [] }));
    add(expanded, fusion.expanded);
    if (modelScores) add(sortedScores(Float64Array.from(this.#tools, (tool) => Math.max(0, modelScores.get(tool.id) ?? 0))), fusion.model);
    const termSet = new Set(terms);
    const askedTerms = new Set(asked.map(stem));
    const { named, mentioned } = this.#boosts.namedServers(
      namingQueryOf(requestTextOf(query)),
      termSet,
      new Set(terms.filter((term) => !askedTerms.has(term))),
      (word) => this.#ordinary(word),
    );
    // A server the query only mentions (an everyday word of its name, not used as one) ranks its
    // tools at a lower weight and is not lifted: "What time does flight LH400 land" is not about the time server.
    this.#serverRanking(fused, mentioned, fusion.mentionedServers);
    const ranked = this.#boosted(query, fused, named, termSet, fusion);
    // What an agent chose after asking the same way is a strong answer, however few words it shares.
    const confidence = ranked[0]?.recalled ? 1 : this.#confidence(ranked[0], terms, asked, aligned[0]?.[1]);
    const meantWords = [...new Set([...meant.values()].flat())].filter((word) => !words.includes(word));
    return { ranked, confidence, words: { terms: [...terms, ...meantTerms.keys()], all: [...words, ...meantWords] } };
  }

  /**
   * The fused scores, lifted for the servers the query names, the tools whose names it says and, for
   * a question, the tools that only read; then ranked, remembered choices first.
   */
  #boosted(
    query: string,
    fused: Map<number, RankedTool>,
    named: ReadonlySet<string>,
    terms: ReadonlySet<string>,
    fusion: FusionSettings,
  ): RankedTool[] {
    const boosts = this.#setup.nameBoosts ?? DEFAULT_NAME_BOOSTS;
    if (named.size) {
      for (const [tool, hit] of fused) hit.score *= this.#boosts.serverFactor(tool, named, boosts);
      // Naming a server is a ranking of its own, as word and meaning matches are: the named servers'
      // tools, best first, each earn from it. A multiplier alone cannot lift a server whose tools share
      // no other word with the request ("memory" for entities in a knowledge graph) above tools that share several.
      this.#serverRanking(fused, named, fusion.namedServers, (hit, rank) => (hit.namedServer = { rank }));
    }
    this.#nameSaidFirst(fused, terms, boosts.name);
    if (fusion.questionReadBoost > 0 && isQuestion(query)) {
      for (const [tool, hit] of fused) if (this.#readsOnly(tool)) hit.score *= 1 + fusion.questionReadBoost;
    }
    this.#deprecatedBelowReplacement(fused);
    return this.#recalledFirst(
      query,
      fused,
      [...fused.values()].sort((a, b) => b.score - a.score || a.tool.id.localeCompare(b.tool.id)),
    );
  }

  /** The tools of `servers`, best fused score first, each earning `weight` / (k + rank) as a ranking of its own. */
  #serverRanking(
    fused: Map<number, RankedTool>,
    servers: ReadonlySet<string>,
    weight: number,
    note?: (hit: RankedTool, rank: number) => void,
  ): void {
    if (!servers.size || weight <= 0) return;
    const k = (this.#setup.fusion ?? DEFAULT_FUSION).k;
    [...fused]
      .filter(([tool]) => servers.has(this.#tools[tool]!.server))
      .sort(([a, first], [b, second]) => second.score - first.score || a - b)
      .forEach(([, hit], rank) => {
        hit.score += weight / (k + rank + 1);
        note?.(hit, rank + 1);
      });
  }

  /**
   * The ranking with the tools chosen after this query (or a nearly identical one) first, most
   * evidence first: the promise is that the next agent who asks the same way finds that tool first.
   */
  #recalledFirst(query: string, fused: Map<number, RankedTool>, ranked: RankedTool[]): RankedTool[] {
    const recall = this.#setup.recall;
    if (!recall?.size) return ranked;
    const key = queryKeyOf(query);
    const asked = new Set(key.split(' '));
    const evidence = new Map<number, number>();
    this.#remembered ??= [...recall].map(([remembered, tools]) => ({ key: remembered, words: new Set(remembered.split(' ')), tools }));
    for (const { key: remembered, words, tools } of this.#remembered) {
      const similarity = remembered === key ? 1 : wordOverlap(asked, words);
      if (similarity < NEAR_QUERY) continue;
      for (const [id, weight] of tools) {
        const index = this.#indexOf(id);
        if (index !== undefined) evidence.set(index, (evidence.get(index) ?? 0) + similarity * weight);
      }
    }
    if (!evidence.size) return ranked;
    const first = [...evidence]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .map(([index, weight]) => {
        let hit = fused.get(index);
        if (!hit) fused.set(index, (hit = { tool: this.#tools[index]!, score: 0 }));
        hit.recalled = weight;
        return hit;
      });
    return [...first, ...ranked.filter((hit) => hit.recalled === undefined)];
  }

  /**
   * A tool whose name the query says (`create_item` for "create item on board") moves up to the
   * top of its server's tools: within a server the name decides between neighbours that all
   * mention the request's words.
   */
  #nameSaidFirst(fused: Map<number, RankedTool>, terms: ReadonlySet<string>, least: number): void {
    if (least > 1) return;
    const best = new Map<string, number>();
    for (const hit of fused.values()) best.set(hit.tool.server, Math.max(best.get(hit.tool.server) ?? 0, hit.score));
    for (const [tool, hit] of fused) {
      const said = this.#boosts.nameSaid(tool, terms);
      // The share said breaks ties among tools that moved up alike.
      if (said >= least) hit.score = Math.max(hit.score, best.get(hit.tool.server)! * (1 + said / 1000));
    }
  }

  /**
   * A tool that says it is deprecated (deprecation.ts) ranks just below its replacement: the tool of
   * its server its description names ("Use read_text_file instead") when that one ranks, else its
   * server's best match that is not deprecated. It stays in the ranking for an agent that still
   * wants it. Last of the lifts, so that no lift puts it back above.
   */
  #deprecatedBelowReplacement(fused: Map<number, RankedTool>): void {
    this.#deprecated ??= new Set(this.#tools.flatMap((tool, index) => (saysDeprecated(tool) ? [index] : [])));
    const deprecated = [...this.#deprecated].flatMap((tool) => fused.get(tool) ?? []);
    if (!deprecated.length) return;
    const servers = new Set(deprecated.map((hit) => hit.tool.server));
    const best = new Map<string, number>();
    const byName = new Map<string, RankedTool>();
    for (const [tool, hit] of fused) {
      if (!servers.has(hit.tool.server) || this.#deprecated.has(tool)) continue;
      best.set(hit.tool.server, Math.max(best.get(hit.tool.server) ?? 0, hit.score));
      byName.set(hit.tool.id, hit);
    }
    for (const hit of deprecated) {
      const named = replacementNamesOf(hit.tool).flatMap((name) => byName.get(`${hit.tool.server}.${name}`)?.score ?? []);
      const replacement = named.length ? Math.min(...named) : best.get(hit.tool.server);
      if (replacement !== undefined && hit.score >= replacement) hit.score = replacement * (1 - 1e-6);
    }
  }

  #indexOf(id: string): number | undefined {
    this.#indexById ??= new Map(this.#tools.map((tool, index) => [tool.id, index]));
    return this.#indexById.get(id);
  }

  /**
   * What expansion adds to the word matches: the stems of each query word's nearest catalog words,
   * weighted by similarity, less the weight a term already has as a query term (1) or a request
   * vocabulary term.
   */
  #expansion(
    index: SemanticIndex,
    words: string[],
    terms: string[],
    meantTerms: ReadonlyMap<string, number>,
    { neighbours, floor }: FusionSettings['expansion'],
  ): [string[], Map<string, number>] {
    const had = new Map<string, number>([...meantTerms, ...terms.map((term): [string, number] => [term, 1])]);
    const added = new Map<string, number>();
    for (const word of words) {
      for (const neighbour of index.neighbours(word, neighbours, floor)) {
        const term = stem(neighbour.word);
        const more = neighbour.similarity - (had.get(term) ?? 0);
        if (more > (added.get(term) ?? 0)) added.set(term, more);
      }
    }
    return [[...added.keys()], added];
  }

  #readsOnly(tool: number): boolean {
    if (this.#readOnly[tool] === -1) this.#readOnly[tool] = readsOnly(this.#tools[tool]!) ? 1 : 0;
    return this.#readOnly[tool] === 1;
  }

  #confidence(best: RankedTool | undefined, terms: string[], asked: readonly string[], bestAlignment: number | undefined): number {
    if (!best) return 0;
    // A product the query names that no tool knows ("send a slack message" without a Slack
    // server): the closest tools share the request's other words, not what it asked for. Such a
    // word counts as the rarest of words, and meaning cannot stand in for it.
    const missing = asked.filter((word) => this.#lexical.idf(stem(word)) === 0 && this.#namesSomething(word));
    if (!missing.length && (bestAlignment ?? 0) >= STRONG_MATCH) return bestAlignment!;
    const index = this.#indexOf(best.tool.id)!;
    const total = terms.reduce((sum, term) => sum + this.#lexical.idf(term), 0) + missing.length * this.#lexical.rarestIdf();
    if (missing.length) return total > 0 ? this.#coverage(index, terms) / total : 0;
    return Math.max(bestAlignment ?? 0, total > 0 ? this.#coverage(index, terms) / total : 0);
  }

  /** The summed rarity of the query terms a tool matches. */
  #coverage(index: number, terms: readonly string[]): number {
    return LexicalIndex.matches(this.#wordsOf(index), terms).reduce((sum, match) => sum + this.#lexical.idf(match.term), 0);
  }

  /**
   * A word of a server's name that is also an everyday word ("time", "plane", "memory"), which names
   * the server only where the query uses it as a name: a product's everyday name, or any other
   * word the word vectors know that names no product. Without the vectors, only the everyday names.
   */
  #ordinary(word: string): boolean {
    if (EVERYDAY_PRODUCT_WORDS.has(word)) return true;
    if (PRODUCT_WORDS.has(word)) return false;
    const semantic = this.#semantic;
    return typeof semantic === 'object' && semantic.vectors.rank(word) !== undefined;
  }

  /** A word that names a thing: a known product, or a word the word vectors do not know (a name, not English). */
  #namesSomething(word: string): boolean {
    if (PRODUCT_WORDS.has(word)) return true;
    const semantic = this.#semantic;
    return (
      typeof semantic === 'object' &&
      word.length >= 4 &&
      semantic.vectors.rank(word) === undefined &&
      semantic.vectors.rank(stem(word)) === undefined
    );
  }

  #addReasons(hits: RankedTool[], { terms, all }: QueryWords): void {
    const semantic = this.#semanticIndex();
    for (const hit of hits) {
      const index = this.#indexOf(hit.tool.id)!;
      if (hit.lexical) hit.lexical.matches = LexicalIndex.matches(this.#wordsOf(index), terms);
      if (hit.semantic && semantic !== 'unavailable') hit.semantic.alignments = semantic.index.explain(this.#wordsOf(index), all);
    }
  }

  // Vectors load on the first ranked search (not at start-up), and the index over them with it.
  #semanticIndex(): { index: SemanticIndex; vectors: WordVectors } | 'unavailable' {
    if (this.#semantic) return this.#semantic;
    const load = this.#setup.vectorFile === false ? undefined : loadWordVectors(this.#setup.vectorFile);
    if (!load?.ok) {
      this.#words = undefined;
      if (load) this.#setup.onVectorsUnavailable?.(load.error);
      this.#save(undefined);
      return (this.#semantic = 'unavailable');
    }
    const alignment = this.#setup.alignment ?? DEFAULT_ALIGNMENT;
    const index = this.#savedSemantic
      ? new SemanticIndex(this.#savedSemantic, this.#tools.length, load.vectors, alignment)
      : SemanticIndex.build(this.#words ?? this.#texts.map(toolWordsOf), load.vectors, alignment);
    this.#words = undefined;
    if (!this.#savedSemantic) this.#save(index.postings);
    this.#savedSemantic = undefined;
    return (this.#semantic = { index, vectors: load.vectors });
  }

  // Saved once both indexes exist (or the meaning index cannot): what the next process loads.
  #save(semantic: Postings | undefined): void {
    if (this.#fingerprint) this.#setup.savedIndex?.save(this.#fingerprint, { lexical: this.#lexical.postings, semantic });
  }

  /** One tool's words, from the build if still kept, else tokenized again (explain, strength). */
  #wordsOf(index: number): ToolWords {
    return this.#words?.[index] ?? toolWordsOf(this.#texts[index]!);
  }

  #suggestionIndex(): MiniSearch<{ id: string; name: string; server: string }> {
    const index = new MiniSearch<{ id: string; name: string; server: string }>({
      fields: ['name', 'server'],
      tokenize: (text) =>
        text
          .replace(/([a-z])([A-Z])/g, '$1 $2')
          .split(/[^\p{L}\p{N}]+/u)
          .filter(Boolean),
      processTerm: (term) => term.toLowerCase(),
    });
    index.addAll(this.#tools.map(({ id, name, server }) => ({ id, name, server })));
    return index;
  }
}

/** Weight of a query word: rarer words (by corpus frequency) say more about the tool wanted. */
function rarityOf(word: string, vectors: WordVectors | undefined): number {
  if (!vectors) return 1;
  const rank = vectors.rank(word) ?? vectors.rank(stem(word)) ?? vectors.size;
  return Math.log(1 + rank / RARITY_SCALE) + 0.1;
}
