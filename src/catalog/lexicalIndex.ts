// Word-match ranking: BM25F over the search fields, exact stemmed terms only. No prefix or fuzzy
// expansion: they let "organization" match "organ" and "file" match "filesystem", and they were
// most of the query time at 10k tools.
import { PostingsBuilder, type Postings } from './postings.js';
import { SEARCH_FIELDS, stem, type SearchField, type ToolWords } from './searchText.js';

/** How much a term in each field counts, relative to the description. */
export type FieldWeights = Readonly<Record<SearchField, number>>;

// A word of the name says more about the tool than one of a long description; the server key
// carries the platform cue ("in Asana"), the server's own text what it is for, at a tool's remove; parameter text is long and generic, so it counts least.
// Learned words are evidence, not definition: low, so they reorder close calls.
export const DEFAULT_FIELD_WEIGHTS: FieldWeights = {
  name: 3,
  title: 2,
  server: 3,
  about: 0.5,
  description: 1,
  params: 0.3,
  keywords: 2,
  examples: 0.8,
  learned: 0.6,
};

// BM25's term-saturation and length-normalisation constants; b per field, since a name's length
// is not a sign of verbosity the way a description's is.
const K1 = 1.2;
const LENGTH_NORMALISATION: Readonly<Record<SearchField, number>> = {
  name: 0.3,
  title: 0.3,
  server: 0,
  about: 0.5,
  description: 0.75,
  params: 0.75,
  keywords: 0.3,
  examples: 0.75,
  learned: 0.5,
};

/** A matched term and the fields it was found in. */
export interface TermMatch {
  term: string;
  fields: SearchField[];
}

/** An inverted index of stemmed terms with BM25F term weights folded in at build time. */
export class LexicalIndex {
  readonly #toolCount: number;
  /** Each term's key index in `postings` (its entries are read from the packed arrays, not kept as views per term). */
  readonly #keyOf = new Map<string, number>();
  /** What the index was built from, kept whole so it can be saved (see searchIndexFile.ts). */
  readonly postings: Postings;

  /** The index over `toolCount` tools with these postings (from build(), or a saved index). */
  constructor(postings: Postings, toolCount: number) {
    this.#toolCount = toolCount;
    this.postings = postings;
    postings.keys.forEach((term, index) => this.#keyOf.set(term, index));
  }

  /** Build the index over each tool's words. */
  static build(words: readonly ToolWords[], weights: FieldWeights = DEFAULT_FIELD_WEIGHTS): LexicalIndex {
    const averageLength = SEARCH_FIELDS.map(
      (field) => words.reduce((sum, tool) => sum + tool[field].length, 0) / Math.max(1, words.length) || 1,
    );
    const building = new PostingsBuilder();
    words.forEach((fields, tool) => {
      const termWeight = new Map<string, number>();
      SEARCH_FIELDS.forEach((field, f) => {
        const fieldWords = fields[field];
        if (weights[field] === 0 || fieldWords.length === 0) return;
        const b = LENGTH_NORMALISATION[field];
        const weight = weights[field] / (1 - b + (b * fieldWords.length) / averageLength[f]!);
        for (const word of fieldWords) {
          const term = stem(word);
          termWeight.set(term, (termWeight.get(term) ?? 0) + weight);
        }
      });
      for (const [term, weight] of termWeight) building.add(term, tool, weight);
    });
    return new LexicalIndex(building.build(), words.length);
  }

  /**
   * BM25F score of every tool (0 for no match) for `terms`, stemmed, each weighted (default 1),
   * added to `scores` when given (the scores of other terms).
   */
  score(
    terms: readonly string[],
    termWeights?: ReadonlyMap<string, number>,
    scores: Float64Array = new Float64Array(this.#toolCount),
  ): Float64Array {
    const { offsets, tools, weights } = this.postings;
    for (const term of terms) {
      const key = this.#keyOf.get(term);
      if (key === undefined) continue;
      const idf = this.idf(term) * (termWeights?.get(term) ?? 1);
      for (let i = offsets[key]!, end = offsets[key + 1]!; i < end; i++) {
        const weight = weights[i]!;
        scores[tools[i]!]! += (idf * weight * (K1 + 1)) / (K1 + weight);
      }
    }
    return scores;
  }

  /** Inverse document frequency of a term (0 for unknown terms). */
  idf(term: string): number {
    const key = this.#keyOf.get(term);
    const count = key === undefined ? 0 : this.postings.offsets[key + 1]! - this.postings.offsets[key]!;
    return count ? Math.log(1 + (this.#toolCount - count + 0.5) / (count + 0.5)) : 0;
  }

  /** The inverse document frequency of a term only one tool has: the most a known term can weigh. */
  rarestIdf(): number {
    return Math.log(1 + (this.#toolCount - 0.5) / 1.5);
  }

  /** Which of `terms` a tool with these words matched, and in which fields (for --explain). */
  static matches(fields: ToolWords, terms: readonly string[]): TermMatch[] {
    const fieldTerms = SEARCH_FIELDS.map((field) => [field, new Set(fields[field].map(stem))] as const);
    return terms
      .map((term) => ({ term, fields: fieldTerms.filter(([, set]) => set.has(term)).map(([field]) => field) }))
      .filter((match) => match.fields.length > 0);
  }
}
