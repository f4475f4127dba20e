// The search index kept between processes (the data dir's search-index.bin), so that `loadout
// search` and a gateway's first search after a warm start read the index instead of building it
// (tokenizing every tool's text is most of a build). The file is keyed by a fingerprint of what the
// index is built from; a file of another fingerprint, or one that fails its digest or its shape
// checks, is never used: the index is built anew and the file rewritten (atomically). It holds
// postings only: the word vectors are the shipped file's, read as before.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { errorMessage, LOADOUT_VERSION, type Logger, type WorkInFlight } from '../shared/index.js';
import { postingsFit, type Postings } from './postings.js';
import type { ToolText } from './searchText.js';
import { SEARCH_FIELDS } from './searchText.js';

/** What a saved index holds: the word-match postings and, once built, the meaning-match vocabulary's. */
export interface SavedIndex {
  lexical: Postings;
  semantic?: Postings | undefined;
}

/** Where a catalog search keeps its index between processes. */
export interface SavedIndexPort {
  /** The index saved under `fingerprint` (which counts the tools), if a whole one for `toolCount` tools is there. */
  load(fingerprint: string, toolCount: number): SavedIndex | undefined;
  /** Keep `index` under `fingerprint` (in the background). */
  save(fingerprint: string, index: SavedIndex): void;
}

const MAGIC = 'LDSI';
// Raise when the tokenizer, the stemmer or how postings are weighted changes without a new
// loadout version (a development build): an older file is then rebuilt, never read.
const FORMAT_VERSION = 2;
const PREFIX_BYTES = 12;

/**
 * The fingerprint of an index: the loadout version and file format, the settings that weigh
 * postings, and every tool's text by field (which holds its name, description, parameters, server
 * text, keywords, learned words and examples, as ranked).
 */
export function searchIndexFingerprint(texts: readonly ToolText[], settings: unknown): string {
  const hash = createHash('sha256');
  hash.update(`${FORMAT_VERSION}\n${LOADOUT_VERSION}\n${JSON.stringify(settings)}\n${texts.length}\n`);
  // The same bytes as hashing each field with its NUL appended, without a new string per field.
  for (const text of texts) for (const field of SEARCH_FIELDS) hash.update(text[field]).update('\u0000');
  return hash.digest('hex');
}

/** The header of the file, before the packed arrays. */
interface Header {
  fingerprint: string;
  /** sha256 of the rest of the header and the arrays that follow. */
  digest: string;
  lexical: { keys: string[]; entries: number };
  semantic?: { keys: string[]; entries: number };
}

/** The saved search index in one file. */
export class SearchIndexFile implements SavedIndexPort {
  readonly #file: string;
  readonly #logger: Logger | undefined;
  readonly #work: WorkInFlight | undefined;
  /** What the file holds (or will, once written), so that one catalog's index is written once. */
  #saved: { fingerprint: string; semantic: boolean } | undefined;
  /** Writes, one after another so the last index saved wins. */
  #writes: Promise<void> = Promise.resolve();

  /** `work` tracks the writes (an owner that stops awaits them); `logger` hears of a failed one. */
  constructor(file: string, options: { logger?: Logger; work?: WorkInFlight } = {}) {
    this.#file = file;
    this.#logger = options.logger;
    this.#work = options.work;
  }

  // Read at once (the first search waits for it either way); a missing, foreign or damaged file is no index.
  load(fingerprint: string, toolCount: number): SavedIndex | undefined {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.#file);
    } catch {
      return undefined;
    }
    const index = decode(bytes, fingerprint, toolCount);
    if (index) this.#saved = { fingerprint, semantic: index.semantic !== undefined };
    return index;
  }

  save(fingerprint: string, index: SavedIndex): void {
    if (fingerprint === this.#saved?.fingerprint && (this.#saved.semantic || !index.semantic)) return;
    this.#saved = { fingerprint, semantic: index.semantic !== undefined };
    const write = this.#writes
      .then(async () => {
        // Encoded off the search that built it (a copy, a digest and a header of every word): that
        // search's answer goes out first. The index is not changed once built.
        await new Promise(setImmediate);
        const bytes = encode(fingerprint, index);
        const { default: writeFileAtomic } = await import('write-file-atomic');
        await writeFileAtomic(this.#file, bytes);
      })
      .catch((error: unknown) =>
        this.#logger?.warn({ mod: 'catalog', file: this.#file, err: errorMessage(error) }, 'could not keep the search index'),
      );
    this.#writes = this.#work ? this.#work.track(write) : write;
  }
}

/** The file's bytes: magic, format version, header length, the header (JSON), then the arrays, 4-byte aligned. */
export function encode(fingerprint: string, index: SavedIndex): Buffer {
  const parts = [index.lexical, ...(index.semantic ? [index.semantic] : [])];
  const arrays = parts.flatMap(({ offsets, tools, weights }) => [offsets, tools, weights]);
  const body = Buffer.concat(arrays.map((array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength)));
  const described: Omit<Header, 'digest'> = {
    fingerprint,
    lexical: { keys: [...index.lexical.keys], entries: index.lexical.tools.length },
    ...(index.semantic ? { semantic: { keys: [...index.semantic.keys], entries: index.semantic.tools.length } } : {}),
  };
  const json = Buffer.from(JSON.stringify({ ...described, digest: digestOf(described, body) }), 'utf8');
  const padded = Buffer.alloc(Math.ceil(json.length / 4) * 4, 0x20);
  json.copy(padded);
  const prefix = Buffer.alloc(PREFIX_BYTES);
  prefix.write(MAGIC, 0, 'ascii');
  prefix.writeUInt32LE(FORMAT_VERSION, 4);
  prefix.writeUInt32LE(padded.length, 8);
  return Buffer.concat([prefix, padded, body]);
}

/** The index in `bytes` if it is whole and saved under `fingerprint` for `toolCount` tools. */
export function decode(bytes: Buffer, fingerprint: string, toolCount: number): SavedIndex | undefined {
  if (bytes.length < PREFIX_BYTES || bytes.toString('ascii', 0, 4) !== MAGIC || bytes.readUInt32LE(4) !== FORMAT_VERSION) return undefined;
  const headerBytes = bytes.readUInt32LE(8);
  if (headerBytes % 4 !== 0 || PREFIX_BYTES + headerBytes > bytes.length) return undefined;
  let header: Header;
  try {
    header = JSON.parse(bytes.toString('utf8', PREFIX_BYTES, PREFIX_BYTES + headerBytes)) as Header;
  } catch {
    return undefined;
  }
  if (header.fingerprint !== fingerprint) return undefined;
  // Typed arrays need aligned memory: copied once when the read buffer is not.
  let body = bytes.subarray(PREFIX_BYTES + headerBytes);
  const { digest, ...described } = header;
  if (digestOf(described, body) !== digest) return undefined;
  if (body.byteOffset % 4 !== 0) body = Buffer.from(body);
  let at = 0;
  const take = (part: { keys: string[]; entries: number } | undefined): Postings | undefined => {
    if (!part || !Array.isArray(part.keys) || !Number.isInteger(part.entries) || part.entries < 0) return undefined;
    const offsets = 4 * (part.keys.length + 1);
    if (at + offsets + 8 * part.entries > body.length) return undefined;
    const start = body.byteOffset + at;
    at += offsets + 8 * part.entries;
    const buffer = body.buffer as ArrayBuffer;
    return {
      keys: part.keys,
      offsets: new Int32Array(buffer, start, part.keys.length + 1),
      tools: new Int32Array(buffer, start + offsets, part.entries),
      weights: new Float32Array(buffer, start + offsets + 4 * part.entries, part.entries),
    };
  };
  const lexical = take(header.lexical);
  const semantic = header.semantic ? take(header.semantic) : undefined;
  if (!lexical || at !== body.length || (header.semantic && !semantic)) return undefined;
  if (![lexical, ...(semantic ? [semantic] : [])].every((postings) => postingsFit(postings, toolCount))) return undefined;
  return { lexical, semantic };
}

function digestOf(described: Omit<Header, 'digest'>, body: Buffer): string {
  return createHash('sha256').update(JSON.stringify(described)).update(body).digest('hex');
}
