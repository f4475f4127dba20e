// Reads the offline word-vector file (assets/word-vectors.bin, written by
// scripts/reduce-vectors.mjs): the 50k most frequent English words of GloVe 6B, 100d, as Int8,
// with each word's hubness.
// Loaded once per process, on the first ranked search, never at start-up.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LoadoutError, errorMessage } from '../shared/index.js';

const MAGIC = 'LDWV';
const VERSION = 2;
const HEADER_BYTES = 20;
const FILE_NAME = 'word-vectors.bin';

/** Unit-length word vectors, with each word's corpus-frequency rank and hubness. */
export class WordVectors {
  readonly dimensions: number;
  readonly size: number;
  /** The mean hubness over all words, so a word's hubness can be read relative to it. */
  readonly meanHubness: number;
  readonly #rows: Int8Array;
  readonly #hubness: Uint8Array;
  readonly #rankOf: Map<string, number>;

  private constructor(words: string[], rows: Int8Array, hubness: Uint8Array, dimensions: number) {
    this.dimensions = dimensions;
    this.size = words.length;
    this.#rows = rows;
    this.#hubness = hubness;
    this.meanHubness = hubness.reduce((sum, value) => sum + value, 0) / Math.max(1, hubness.length) / 255;
    this.#rankOf = new Map(words.map((word, rank) => [word, rank]));
  }

  /** Parse a vector file; a missing, truncated or foreign file is a SEARCH_VECTORS_INVALID error. */
  static read(file: string): WordVectors {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      throw new LoadoutError('SEARCH_VECTORS_INVALID', `Cannot read the word-vector file ${file}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    const invalid = (why: string) =>
      new LoadoutError('SEARCH_VECTORS_INVALID', `The word-vector file ${file} is corrupt (${why}); reinstall loadout.`);
    if (bytes.length < HEADER_BYTES || bytes.toString('ascii', 0, 4) !== MAGIC) throw invalid('not a loadout vector file');
    if (bytes.readUInt32LE(4) !== VERSION) throw invalid(`version ${bytes.readUInt32LE(4)}, expected ${VERSION}`);
    const count = bytes.readUInt32LE(8);
    const dimensions = bytes.readUInt32LE(12);
    const wordBytes = bytes.readUInt32LE(16);
    if (dimensions === 0 || HEADER_BYTES + wordBytes + count * (dimensions + 1) !== bytes.length)
      throw invalid('its length does not match its header');
    const words = bytes.toString('utf8', HEADER_BYTES, HEADER_BYTES + wordBytes).split('\n');
    if (words.length !== count) throw invalid(`${words.length} words for ${count} vectors`);
    const start = HEADER_BYTES + wordBytes;
    const rows = new Int8Array(bytes.buffer, bytes.byteOffset + start, count * dimensions);
    const hubness = new Uint8Array(bytes.buffer, bytes.byteOffset + start + count * dimensions, count);
    return new WordVectors(words, rows, hubness, dimensions);
  }

  /** The word's corpus-frequency rank (0 = most frequent), if it has a vector. */
  rank(word: string): number | undefined {
    return this.#rankOf.get(word);
  }

  /**
   * How close the word sits to its nearest neighbours (mean cosine of the closest ten), if it has
   * a vector: high for hub words that are near-best matches of very many others.
   */
  hubness(word: string): number | undefined {
    const rank = this.#rankOf.get(word);
    return rank === undefined ? undefined : this.#hubness[rank]! / 255;
  }

  /** The word's vector scaled to unit length, if it has one. */
  vector(word: string): Float32Array | undefined {
    const vector = new Float32Array(this.dimensions);
    return this.writeVector(word, vector, 0) ? vector : undefined;
  }

  /**
   * Write the word's unit vector into `target` at `offset` (a row of a matrix, with no array of its
   * own per word); false, leaving `target` as it was, when the word has no vector.
   */
  writeVector(word: string, target: Float32Array, offset: number): boolean {
    const rank = this.#rankOf.get(word);
    if (rank === undefined) return false;
    let norm = 0;
    for (let d = 0; d < this.dimensions; d++) {
      const value = this.#rows[rank * this.dimensions + d]!;
      target[offset + d] = value;
      norm += value * value;
    }
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let d = 0; d < this.dimensions; d++) target[offset + d]! *= scale;
    return true;
  }
}

/** The vector file shipped with loadout: assets/ at the package root, above dist/src/catalog or dist/bundle. */
export function defaultWordVectorFile(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 5; up++) {
    const candidate = path.join(dir, 'assets', FILE_NAME);
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'assets', FILE_NAME);
}

/** The outcome of loading a vector file, kept so a process reads (or fails on) each file once. */
export type WordVectorLoad = { ok: true; vectors: WordVectors } | { ok: false; error: LoadoutError };

const loads = new Map<string, WordVectorLoad>();

/** Load `file` once per process; failures are returned, not thrown, so search falls back to words. */
export function loadWordVectors(file: string = defaultWordVectorFile()): WordVectorLoad {
  let load = loads.get(file);
  if (!load) {
    try {
      load = { ok: true, vectors: WordVectors.read(file) };
    } catch (error) {
      load = { ok: false, error: error instanceof LoadoutError ? error : new LoadoutError('SEARCH_VECTORS_INVALID', errorMessage(error)) };
    }
    loads.set(file, load);
  }
  return load;
}
