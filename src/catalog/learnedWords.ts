// Words learned from use: when an agent's discover-all-tools query is followed in the same
// session by equipping, building with or calling a tool, the query's words are recorded for that
// tool in the data dir (word-level: similar queries find it more easily), and the query itself
// with the tool (query-level: the next agent who asks the same way finds it first). Evidence fades
// (half-life), each tool keeps its strongest words and the file keeps its strongest tools, and
// every update is a locked read-modify-write, so two loadout processes never lose each other's.
// The words are the store's learned-words record (LEARNED_WORDS_KEY): learned-words.json in files
// mode, the team store's row with `--store`. Each record() is the store's read-modify-write, under
// the file's lock or retried on a concurrent write, so replicas learning at once lose nothing.
import type { LearnedWordsFile } from '../config/index.js';
import { LEARNED_WORDS_KEY, dataDirRecords, type RecordCollection } from '../store/index.js';

/** Bounds and fading of the store. */
export interface LearnedWordsLimits {
  halfLifeDays: number;
  wordsPerTool: number;
  tools: number;
  /** Evidence below this (after fading) is forgotten. */
  minimumEvidence: number;
  /** The most queries remembered, and the most tools each one remembers. */
  queries: number;
  toolsPerQuery: number;
}

const DEFAULT_LEARNED_LIMITS: LearnedWordsLimits = {
  halfLifeDays: 30,
  wordsPerTool: 24,
  tools: 5000,
  minimumEvidence: 0.1,
  queries: 2000,
  toolsPerQuery: 5,
};

/** What use has taught search: each tool's words as index text, and each query's tools with their evidence. */
export interface LearnedSearch {
  words: Map<string, string>;
  queries: Map<string, Map<string, number>>;
}

const DAY_MS = 86_400_000;

/** The learned words of a store. */
export class LearnedWordsStore {
  readonly #records: Promise<RecordCollection<LearnedWordsFile>>;
  readonly #limits: LearnedWordsLimits;
  readonly #now: () => number;

  /** `source`: the store's learned-words records, or a data dir's learned-words.json (opened as files mode keeps it). */
  constructor(source: string | RecordCollection<LearnedWordsFile>, limits: Partial<LearnedWordsLimits> = {}, now: () => number = Date.now) {
    this.#records = typeof source === 'string' ? dataDirRecords(source, 'learnedWords') : Promise.resolve(source);
    this.#limits = { ...DEFAULT_LEARNED_LIMITS, ...limits };
    this.#now = now;
  }

  /** Each tool's learned words, strongest first, as index text (an unreadable file counts as empty). */
  async read(): Promise<Map<string, string>> {
    return (await this.readAll()).words;
  }

  /** The learned words, and each remembered query's tools with their faded evidence. */
  async readAll(): Promise<LearnedSearch> {
    const kept = await (await this.#records).get(LEARNED_WORDS_KEY);
    return this.#searchOf(kept?.value ?? noLearnedWords(), this.#now());
  }

  /**
   * Add one unit of evidence for each of `words` to each of `tools`, and for `tools` to the query
   * `queryKey`. Answers what is kept now, as readAll would (other processes' records included:
   * the update re-reads under the source's lock or retry), so the writer need not read it back;
   * undefined when there was nothing to record.
   */
  async record(tools: readonly string[], words: readonly string[], queryKey?: string): Promise<LearnedSearch | undefined> {
    if (!tools.length || !words.length) return undefined;
    let written: { file: LearnedWordsFile; now: number } | undefined;
    await (
      await this.#records
    ).update(LEARNED_WORDS_KEY, (current) => {
      const file = current ?? noLearnedWords();
      const now = this.#now();
      for (const tool of tools) {
        const entries = file.tools[tool] ?? {};
        for (const word of words) entries[word] = [this.#faded(entries[word], now) + 1, now];
        file.tools[tool] = Object.fromEntries(this.#strongest(entries, now, this.#limits.wordsPerTool));
      }
      if (queryKey) {
        const queries = (file.queries ??= {});
        const entries = queries[queryKey] ?? {};
        for (const tool of tools) entries[tool] = [this.#faded(entries[tool], now) + 1, now];
        queries[queryKey] = Object.fromEntries(this.#strongest(entries, now, this.#limits.toolsPerQuery));
      }
      written = { file: this.#bounded(file, now), now };
      return written.file;
    });
    return written && this.#searchOf(written.file, written.now);
  }

  #searchOf(file: LearnedWordsFile, now: number): LearnedSearch {
    const words = new Map<string, string>();
    for (const [tool, entries] of Object.entries(file.tools)) {
      const kept = this.#strongest(entries, now, this.#limits.wordsPerTool);
      if (kept.length) words.set(tool, kept.map(([word]) => word).join(' '));
    }
    const queries = new Map<string, Map<string, number>>();
    for (const [query, entries] of Object.entries(file.queries ?? {})) {
      const kept = this.#strongest(entries, now, this.#limits.toolsPerQuery);
      if (kept.length) queries.set(query, new Map(kept.map(([tool, entry]) => [tool, this.#faded(entry, now)])));
    }
    return { words, queries };
  }

  #faded(entry: readonly [number, number] | undefined, now: number): number {
    if (!entry) return 0;
    const [evidence, at] = entry;
    return evidence * Math.pow(0.5, Math.max(0, now - at) / (this.#limits.halfLifeDays * DAY_MS));
  }

  /** Entries still above the minimum after fading, strongest first, at most `count`. */
  #strongest(entries: Record<string, [number, number]>, now: number, count: number): [string, [number, number]][] {
    return strongestFirst(
      Object.entries(entries).map(([key, entry]) => ({ key, value: entry, strength: this.#faded(entry, now) })),
      count,
      this.#limits.minimumEvidence,
    );
  }

  /** The file with only its strongest tools and queries (by total faded evidence). */
  #bounded(file: LearnedWordsFile, now: number): LearnedWordsFile {
    const strongest = (records: Record<string, Record<string, [number, number]>>, count: number) =>
      Object.fromEntries(
        strongestFirst(
          Object.entries(records)
            .filter(([, entries]) => Object.keys(entries).length > 0)
            .map(([key, entries]) => ({
              key,
              value: entries,
              strength: Object.values(entries).reduce((sum, entry) => sum + this.#faded(entry, now), 0),
            })),
          count,
        ),
      );
    const queries = strongest(file.queries ?? {}, this.#limits.queries);
    return { version: 1, tools: strongest(file.tools, this.#limits.tools), ...(Object.keys(queries).length ? { queries } : {}) };
  }
}

/**
 * The `count` strongest of `items` at or above `minimum`, strongest first (ties by key), as
 * [key, value]. Each strength is worked out once, before sorting: the comparator runs
 * n·log n times, and a strength sums faded evidence (a power each).
 */
function strongestFirst<T>(items: Array<{ key: string; value: T; strength: number }>, count: number, minimum = -Infinity): [string, T][] {
  return items
    .filter((item) => item.strength >= minimum)
    .sort((a, b) => b.strength - a.strength || a.key.localeCompare(b.key))
    .slice(0, count)
    .map((item) => [item.key, item.value]);
}

/** Nothing learned yet. */
function noLearnedWords(): LearnedWordsFile {
  return { version: 1, tools: {} };
}
