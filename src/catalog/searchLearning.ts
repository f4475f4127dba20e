// Connects a session's searches to what it then uses: the last discover-all-tools query of a
// session, followed within a while by equipping, building with or calling tools, teaches the
// learned-words store those tools' new words. A query that led nowhere teaches nothing.
import type { LearnedWordsStore } from './learnedWords.js';
import { queryWordsOf } from './search.js';

/** How long after a query a use still counts as its outcome. */
const QUERY_WINDOW_MS = 15 * 60_000;
/** The most words one query teaches. */
const WORDS_PER_QUERY = 16;

interface PendingQuery {
  words: string[];
  at: number;
  /** Tools already credited with this query (a build then an equip counts once). */
  credited: Set<string>;
}

/** Per-session memory of the last query, and the recording of its outcome. */
export class SearchLearning {
  readonly #store: LearnedWordsStore;
  readonly #onLearned: () => Promise<void>;
  readonly #now: () => number;
  readonly #pending = new WeakMap<object, PendingQuery>();

  constructor(store: LearnedWordsStore, onLearned: () => Promise<void>, now: () => number = Date.now) {
    this.#store = store;
    this.#onLearned = onLearned;
    this.#now = now;
  }

  /** A session searched with `query`. */
  queried(session: object, query: string): void {
    const words = [...new Set(queryWordsOf(query))].slice(0, WORDS_PER_QUERY);
    if (words.length) this.#pending.set(session, { words, at: this.#now(), credited: new Set() });
  }

  /** A session used these tools (by id): credit them with its last query, if recent. */
  async used(session: object, toolIds: readonly string[]): Promise<void> {
    const pending = this.#pending.get(session);
    if (!pending || this.#now() - pending.at > QUERY_WINDOW_MS) return;
    const fresh = toolIds.filter((id) => !pending.credited.has(id));
    if (!fresh.length) return;
    for (const id of fresh) pending.credited.add(id);
    await this.#store.record(fresh, pending.words);
    await this.#onLearned();
  }
}
