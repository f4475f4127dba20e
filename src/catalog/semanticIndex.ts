// Meaning-match ranking with static word vectors: a tool scores by how well each query word is
// aligned with its closest word in the tool's text (best cosine, sharpened and floored),
// weighted by how rare the query word is. Finds "dbs" → "databases" with no synonym list.
import { PostingsBuilder, type Postings } from './postings.js';
import { SEARCH_FIELDS, stem, type SearchField, type ToolWords } from './searchText.js';
import type { WordVectors } from './wordVectors.js';

/** Tuning of the alignment score. */
export interface AlignmentSettings {
  /**
   * Cosines at or below this count as no match: with the common directions removed from the
   * vectors, unrelated words sit near 0 and related ones at 0.3–0.6.
   */
  floor: number;
  /** Power applied above the floor, so one close word beats several loose ones. */
  sharpness: number;
  /**
   * How much a tool word's hubness above the average is taken off its similarities. Hub words
   * ("sort", "user", "message") are close to almost everything, so without this they are the best
   * match of many unrelated query words and lift tools that merely contain them.
   */
  hubPenalty: number;
  /** Fields whose words a query word may align with, and how much a match there counts. */
  fields: Readonly<Partial<Record<SearchField, number>>>;
}

export const DEFAULT_ALIGNMENT: AlignmentSettings = {
  floor: 0.2,
  sharpness: 2,
  hubPenalty: 0.3,
  fields: { name: 1, title: 1, server: 1, about: 0.5, description: 0.85, params: 0.5, keywords: 1, examples: 0.8, learned: 0.7 },
};

/** A query word and the tool word it aligned with best (for --explain). */
export interface WordAlignment {
  word: string;
  closest: string;
  similarity: number;
}

/** Tool words by catalog vocabulary id, with each word's tools and their field weight. */
export class SemanticIndex {
  readonly #vectors: WordVectors;
  readonly #settings: AlignmentSettings;
  readonly #vocabulary: readonly string[];
  readonly #stems: string[];
  /** Vocabulary ids by stem, for the request vocabulary's stand-ins, which match their own stem only. */
  readonly #idsByStem = new Map<string, number[]>();
  /** Unit vectors of vocabulary words, `dimensions` floats each; zeros for words without one. */
  readonly #matrix: Float32Array;
  readonly #hasVector: Uint8Array;
  /** hubPenalty × (hubness − mean hubness) of each vocabulary word; 0 for words without a vector. */
  readonly #hubDiscount: Float32Array;
  readonly #idOf = new Map<string, number>();
  readonly #rows = new Map<string, Float32Array>();
  readonly #toolCount: number;
  /** The vocabulary and its postings, kept whole so they can be saved (see searchIndexFile.ts); the vectors are not. */
  readonly postings: Postings;

  /** The index over `toolCount` tools whose words are `postings` (from wordPostings(), or a saved index). */
  constructor(postings: Postings, toolCount: number, vectors: WordVectors, settings: AlignmentSettings = DEFAULT_ALIGNMENT) {
    this.#vectors = vectors;
    this.#settings = settings;
    this.#toolCount = toolCount;
    this.postings = postings;
    this.#vocabulary = postings.keys;
    this.#stems = postings.keys.map(stem);
    postings.keys.forEach((word, id) => {
      this.#idOf.set(word, id);
      const ids = this.#idsByStem.get(this.#stems[id]!);
      if (ids) ids.push(id);
      else this.#idsByStem.set(this.#stems[id]!, [id]);
    });
    const dimensions = vectors.dimensions;
    this.#matrix = new Float32Array(this.#vocabulary.length * dimensions);
    this.#hasVector = new Uint8Array(this.#vocabulary.length);
    this.#hubDiscount = new Float32Array(this.#vocabulary.length);
    this.#vocabulary.forEach((word, id) => {
      if (!vectors.writeVector(word, this.#matrix, id * dimensions)) return;
      this.#hasVector[id] = 1;
      this.#hubDiscount[id] = settings.hubPenalty * (vectors.hubness(word)! - vectors.meanHubness);
    });
  }

  /** The index over each tool's words. */
  static build(toolWords: readonly ToolWords[], vectors: WordVectors, settings: AlignmentSettings = DEFAULT_ALIGNMENT): SemanticIndex {
    return new SemanticIndex(SemanticIndex.wordPostings(toolWords, settings), toolWords.length, vectors, settings);
  }

  /** Each word of the tools' aligned fields, with its tools and the weight of the best field it is in there. */
  private static wordPostings(toolWords: readonly ToolWords[], settings: AlignmentSettings = DEFAULT_ALIGNMENT): Postings {
    const building = new PostingsBuilder();
    toolWords.forEach((fields, tool) => {
      const words = new Map<string, number>();
      for (const field of SEARCH_FIELDS) {
        const weight = settings.fields[field] ?? 0;
        if (weight === 0) continue;
        for (const word of fields[field]) words.set(word, Math.max(words.get(word) ?? 0, weight));
      }
      for (const [word, weight] of words) building.add(word, tool, weight);
    });
    return building.build();
  }

  /**
   * Alignment score in [0, 1] of every tool (0 for none). `words` are unstemmed content words;
   * `rarity` gives each its weight. A word's `stand-ins` (the request vocabulary's tool words for
   * it) align in its place at their weight when they align better.
   */
  score(
    words: readonly string[],
    rarity: (word: string) => number,
    standIns?: { of: (word: string) => readonly string[]; weight: number },
  ): Float64Array {
    const totals = new Float64Array(this.#toolCount);
    const best = new Float32Array(this.#toolCount);
    let weightSum = 0;
    for (const word of words) {
      const weight = rarity(word);
      weightSum += weight;
      best.fill(0);
      this.#alignments(word, best, 1);
      for (const standIn of standIns?.of(word) ?? []) this.#sameStem(standIn, best, standIns?.weight ?? 0);
      for (let tool = 0; tool < best.length; tool++) totals[tool]! += weight * best[tool]!;
    }
    if (weightSum > 0) for (let tool = 0; tool < totals.length; tool++) totals[tool]! /= weightSum;
    return totals;
  }

  /** Catalog words closest in meaning to `word` (other than its own stem), best first. */
  neighbours(word: string, count: number, floor: number): { word: string; similarity: number }[] {
    const similarities = this.#similarityRow(word);
    const wordStem = stem(word);
    const found: { word: string; similarity: number }[] = [];
    for (let id = 0; id < this.#vocabulary.length; id++) {
      if (this.#stems[id] === wordStem) continue;
      const similarity = similarities[id]!;
      if (similarity > floor) found.push({ word: this.#vocabulary[id]!, similarity });
    }
    return found.sort((a, b) => b.similarity - a.similarity).slice(0, count);
  }

  /** The best alignment of each query word within one tool (for --explain). */
  explain(fields: ToolWords, words: readonly string[]): WordAlignment[] {
    const toolWords = new Set(
      SEARCH_FIELDS.flatMap((field) => ((this.#settings.fields[field] ?? 0) > 0 ? fields[field] : [])).map((word) => this.#idOf.get(word)!),
    );
    return words.flatMap((word) => {
      const similarities = this.#similarityRow(word);
      let best: WordAlignment | undefined;
      for (const id of toolWords) {
        const similarity = similarities[id]!;
        if (similarity > (best?.similarity ?? this.#settings.floor))
          best = { word, closest: this.#vocabulary[id]!, similarity: Math.round(similarity * 100) / 100 };
      }
      return best ? [best] : [];
    });
  }

  /** For one query word: each tool's best sharpened alignment above the floor, times `factor`, into `best`. */
  #alignments(word: string, best: Float32Array, factor: number): void {
    const row = this.#similarityRow(word);
    const { floor, sharpness } = this.#settings;
    for (let id = 0; id < row.length; id++) {
      const similarity = row[id]!;
      if (similarity <= floor) continue;
      this.#raise(id, factor * Math.pow((similarity - floor) / (1 - floor), sharpness), best);
    }
  }

  /**
   * For a stand-in: `factor` for each tool holding a word of its stem, into `best`. Its meaning
   * neighbours are left out: the query word's own vectors already reach those, and a similarity
   * row per stand-in would multiply the cost of a query.
   */
  #sameStem(word: string, best: Float32Array, factor: number): void {
    for (const id of this.#idsByStem.get(stem(word)) ?? []) this.#raise(id, factor, best);
  }

  /** For each tool holding vocabulary word `id`: `match` × its field weight into `best`, where higher. */
  #raise(id: number, match: number, best: Float32Array): void {
    // Read from the packed arrays: a view per word would be two objects for each of thousands of words.
    const { offsets, tools, weights } = this.postings;
    for (let i = offsets[id]!, end = offsets[id + 1]!; i < end; i++) {
      const value = match * weights[i]!;
      const tool = tools[i]!;
      if (value > best[tool]!) best[tool] = value;
    }
  }

  /**
   * Similarity of a query word to each vocabulary word: 1 for the same stem, else the cosine less
   * the word's hub discount (0 without a vector). Kept for the last few words, since a query is scored and expanded with them.
   */
  #similarityRow(word: string): Float32Array {
    let row = this.#rows.get(word);
    if (row) return row;
    row = new Float32Array(this.#vocabulary.length);
    const wordStem = stem(word);
    const vector = this.#vectors.vector(word) ?? this.#vectors.vector(wordStem);
    const dimensions = this.#vectors.dimensions;
    const matrix = this.#matrix;
    for (let id = 0; id < row.length; id++) {
      if (this.#stems[id] === wordStem) row[id] = 1;
      else if (vector && this.#hasVector[id]) {
        row[id] = dotProduct(vector, matrix, id * dimensions) - this.#hubDiscount[id]!;
      }
    }
    if (this.#rows.size >= CACHED_ROWS) this.#rows.clear();
    this.#rows.set(word, row);
    return row;
  }
}

const CACHED_ROWS = 64;

/**
 * `vector` · the row of `matrix` at `offset`. Four running sums instead of one: each addition no
 * longer waits for the one before, which halves the time of the dot products that are most of a
 * query's cost at 10k tools.
 */
function dotProduct(vector: Float32Array, matrix: Float32Array, offset: number): number {
  const length = vector.length;
  let a = 0;
  let b = 0;
  let c = 0;
  let e = 0;
  let d = 0;
  for (; d + 3 < length; d += 4) {
    a += vector[d]! * matrix[offset + d]!;
    b += vector[d + 1]! * matrix[offset + d + 1]!;
    c += vector[d + 2]! * matrix[offset + d + 2]!;
    e += vector[d + 3]! * matrix[offset + d + 3]!;
  }
  for (; d < length; d++) a += vector[d]! * matrix[offset + d]!;
  return a + b + c + e;
}
