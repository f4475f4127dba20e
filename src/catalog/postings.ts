// Postings: for each key of an index (a stemmed term, a vocabulary word), the tools that hold it
// and a weight per tool, packed into three flat typed arrays. Both search indexes keep theirs in
// this form, which is also how the saved search index stores them: loading one is a read, not a build.

/** Keys with their tools and weights: key i owns entries offsets[i] up to offsets[i + 1]. */
export interface Postings {
  readonly keys: readonly string[];
  /** keys.length + 1 ascending entry offsets, from 0 to the entry count. */
  readonly offsets: Int32Array;
  /** Tool indexes, ascending within each key. */
  readonly tools: Int32Array;
  readonly weights: Float32Array;
}

/** Collects (key, tool, weight) entries tool by tool, then packs them. */
export class PostingsBuilder {
  readonly #byKey = new Map<string, { tools: number[]; weights: number[] }>();

  /** Add one entry; tools must be added in ascending order. */
  add(key: string, tool: number, weight: number): void {
    let entry = this.#byKey.get(key);
    if (!entry) this.#byKey.set(key, (entry = { tools: [], weights: [] }));
    entry.tools.push(tool);
    entry.weights.push(weight);
  }

  /** The postings, keys in the order first added. */
  build(): Postings {
    const keys = [...this.#byKey.keys()];
    const offsets = new Int32Array(keys.length + 1);
    let count = 0;
    keys.forEach((key, index) => {
      count += this.#byKey.get(key)!.tools.length;
      offsets[index + 1] = count;
    });
    const tools = new Int32Array(count);
    const weights = new Float32Array(count);
    keys.forEach((key, index) => {
      const entry = this.#byKey.get(key)!;
      tools.set(entry.tools, offsets[index]);
      weights.set(entry.weights, offsets[index]);
    });
    return { keys, offsets, tools, weights };
  }
}

/**
 * Whether `postings` is whole and fits an index of `toolCount` tools: offsets rise from 0 to the
 * entry count and every tool index is in range. What a saved index is checked with before use.
 */
export function postingsFit(postings: Postings, toolCount: number): boolean {
  const { keys, offsets, tools, weights } = postings;
  if (offsets.length !== keys.length + 1 || offsets[0] !== 0 || offsets[keys.length] !== tools.length) return false;
  if (weights.length !== tools.length) return false;
  for (let index = 0; index < keys.length; index++) if (offsets[index + 1]! < offsets[index]!) return false;
  // Indexed, not for…of: run once per load, the loop stays unoptimized, and an iterator's result
  // object per entry was 9 MB of garbage at 5,000 tools.
  for (let entry = 0; entry < tools.length; entry++) if (tools[entry]! < 0 || tools[entry]! >= toolCount) return false;
  return true;
}
