// Meaning-match ranking with static word vectors: a tool scores by how well each query word is
// aligned with its closest word in the tool's text (best cosine, sharpened and floored),
// weighted by how rare the query word is. Finds "dbs" → "databases" with no synonym list.
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
  readonly #vocabulary: string[] = [];
  readonly #stems: string[] = [];
  /** Unit vectors of vocabulary words, `dimensions` floats each; zeros for words without one. */
  readonly #matrix: Float32Array;
  readonly #hasVector: Uint8Array;
  /** hubPenalty × (hubness − mean hubness) of each vocabulary word; 0 for words without a vector. */
  readonly #hubDiscount: Float32Array;
  /** For each vocabulary word, the tools that contain it and the field weight of the best field. */
  readonly #postings: { tools: Int32Array; weights: Float32Array }[] = [];
  readonly #idOf = new Map<string, number>();
  readonly #rows = new Map<string, Float32Array>();
  readonly #toolCount: number;

  constructor(toolWords: readonly ToolWords[], vectors: WordVectors, settings: AlignmentSettings = DEFAULT_ALIGNMENT) {
    this.#vectors = vectors;
    this.#settings = settings;
    const idOf = this.#idOf;
    const building: { tools: number[]; weights: number[] }[] = [];
    this.#toolCount = toolWords.length;
    toolWords.forEach((fields, tool) => {
      const words = new Map<number, number>();
      for (const field of SEARCH_FIELDS) {
        const weight = settings.fields[field] ?? 0;
        if (weight === 0) continue;
        for (const word of fields[field]) {
          let id = idOf.get(word);
          if (id === undefined) {
            id = this.#vocabulary.length;
            idOf.set(word, id);
            this.#vocabulary.push(word);
            this.#stems.push(stem(word));
            building.push({ tools: [], weights: [] });
          }
          words.set(id, Math.max(words.get(id) ?? 0, weight));
        }
      }
      for (const [id, weight] of words) {
        building[id]!.tools.push(tool);
        building[id]!.weights.push(weight);
      }
    });
    for (const { tools, weights } of building) this.#postings.push({ tools: Int32Array.from(tools), weights: Float32Array.from(weights) });
    const dimensions = vectors.dimensions;
    this.#matrix = new Float32Array(this.#vocabulary.length * dimensions);
    this.#hasVector = new Uint8Array(this.#vocabulary.length);
    this.#hubDiscount = new Float32Array(this.#vocabulary.length);
    this.#vocabulary.forEach((word, id) => {
      const vector = vectors.vector(word);
      if (!vector) return;
      this.#matrix.set(vector, id * dimensions);
      this.#hasVector[id] = 1;
      this.#hubDiscount[id] = settings.hubPenalty * (vectors.hubness(word)! - vectors.meanHubness);
    });
  }

  /**
   * Alignment score in [0, 1] of every tool (0 for none). `words` are unstemmed content words;
   * `rarity` gives each its weight.
   */
  score(words: readonly string[], rarity: (word: string) => number): Float64Array {
    const totals = new Float64Array(this.#toolCount);
    const best = new Float32Array(this.#toolCount);
    let weightSum = 0;
    for (const word of words) {
      const weight = rarity(word);
      weightSum += weight;
      best.fill(0);
      this.#alignments(word, best);
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

  /** For one query word: each tool's best sharpened alignment above the floor, into `best`. */
  #alignments(word: string, best: Float32Array): void {
    const row = this.#similarityRow(word);
    const { floor, sharpness } = this.#settings;
    for (let id = 0; id < row.length; id++) {
      const similarity = row[id]!;
      if (similarity <= floor) continue;
      const match = Math.pow((similarity - floor) / (1 - floor), sharpness);
      const { tools, weights } = this.#postings[id]!;
      for (let i = 0; i < tools.length; i++) {
        const value = match * weights[i]!;
        const tool = tools[i]!;
        if (value > best[tool]!) best[tool] = value;
      }
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
        let dot = 0;
        const offset = id * dimensions;
        for (let d = 0; d < dimensions; d++) dot += vector[d]! * matrix[offset + d]!;
        row[id] = dot - this.#hubDiscount[id]!;
      }
    }
    if (this.#rows.size >= CACHED_ROWS) this.#rows.clear();
    this.#rows.set(word, row);
    return row;
  }
}

const CACHED_ROWS = 64;
