// Reads the offline word-vector file (assets/word-vectors.bin, written by
// scripts/reduce-vectors.mjs): the 50k most frequent English words of GloVe 6B, 100d, as Int8,
// with each word's hubness.
// Loaded once per process, on the first ranked search, never at start-up. The words stay in the
// file's bytes, found through a hash table of their offsets: 50,000 strings and a Map of them were
// most of the vectors' heap and garbage, and a query looks up a few words only.
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
  readonly #words: WordTable;

  private constructor(words: WordTable, rows: Int8Array, hubness: Uint8Array, dimensions: number) {
    this.dimensions = dimensions;
    this.size = words.size;
    this.#rows = rows;
    this.#hubness = hubness;
    this.meanHubness = hubness.reduce((sum, value) => sum + value, 0) / Math.max(1, hubness.length) / 255;
    this.#words = words;
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
    const words = new WordTable(bytes.subarray(HEADER_BYTES, HEADER_BYTES + wordBytes));
    if (words.size !== count) throw invalid(`${words.size} words for ${count} vectors`);
    const start = HEADER_BYTES + wordBytes;
    const rows = new Int8Array(bytes.buffer, bytes.byteOffset + start, count * dimensions);
    const hubness = new Uint8Array(bytes.buffer, bytes.byteOffset + start + count * dimensions, count);
    return new WordVectors(words, rows, hubness, dimensions);
  }

  /** The word's corpus-frequency rank (0 = most frequent), if it has a vector. */
  rank(word: string): number | undefined {
    return this.#words.rankOf(word);
  }

  /**
   * How close the word sits to its nearest neighbours (mean cosine of the closest ten), if it has
   * a vector: high for hub words that are near-best matches of very many others.
   */
  hubness(word: string): number | undefined {
    const rank = this.#words.rankOf(word);
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
    const rank = this.#words.rankOf(word);
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

/**
 * The file's '\n'-separated UTF-8 words, looked up in place: an open-addressing table (FNV-1a of
 * a word's bytes) of word ranks, over the words' start offsets. A word listed twice answers its
 * last rank, as a Map built from the list did.
 */
class WordTable {
  readonly size: number;
  readonly #bytes: Buffer;
  /** Word i is bytes[starts[i]] up to the byte before starts[i + 1] (its '\n' left out). */
  readonly #starts: Int32Array;
  /** Rank + 1 of the word in each slot; 0 for an empty slot. Twice the words, a power of two. */
  readonly #slots: Int32Array;

  constructor(bytes: Buffer) {
    this.#bytes = bytes;
    let size = 1;
    for (let at = 0; at < bytes.length; at++) if (bytes[at] === NEWLINE) size++;
    this.size = size;
    this.#starts = new Int32Array(size + 1);
    for (let at = 0, word = 1; at < bytes.length; at++) if (bytes[at] === NEWLINE) this.#starts[word++] = at + 1;
    this.#starts[size] = bytes.length + 1;
    this.#slots = new Int32Array(2 ** Math.ceil(Math.log2(2 * size)));
    for (let rank = 0; rank < size; rank++) {
      const start = this.#starts[rank]!;
      this.#slots[this.#slotOf(bytes, start, this.#starts[rank + 1]! - 1)] = rank + 1;
    }
  }

  /** The word's rank (its line in the file), if it is there. */
  rankOf(word: string): number | undefined {
    // Encoded into one reused buffer: the index looks up every word of its vocabulary.
    const length = Buffer.byteLength(word, 'utf8');
    const key = length <= KEY_BYTES.length ? KEY_BYTES : Buffer.alloc(length);
    key.write(word, 'utf8');
    const rank = this.#slots[this.#slotOf(key, 0, length)]!;
    return rank === 0 ? undefined : rank - 1;
  }

  /** The slot holding the word `key[start, end)`, or the empty slot where it would go. */
  #slotOf(key: Uint8Array, start: number, end: number): number {
    let hash = FNV_OFFSET;
    for (let at = start; at < end; at++) hash = Math.imul(hash ^ key[at]!, FNV_PRIME);
    const mask = this.#slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const rank = this.#slots[slot]!;
      if (rank === 0 || this.#holds(rank - 1, key, start, end)) return slot;
    }
  }

  #holds(rank: number, key: Uint8Array, start: number, end: number): boolean {
    const from = this.#starts[rank]!;
    if (this.#starts[rank + 1]! - 1 - from !== end - start) return false;
    for (let at = 0; at < end - start; at++) if (this.#bytes[from + at] !== key[start + at]) return false;
    return true;
  }
}

const NEWLINE = 0x0a;
const KEY_BYTES = Buffer.alloc(256);
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

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
