// Connects a session's searches to what it then uses: the last discover-all-tools query of a
// session, followed within a while by equipping, building with or calling tools (equipped ones
// included), teaches the learned-words store those tools' new words and the query's answer. A
// query that led nowhere teaches nothing.
import type { WorkInFlight } from '../shared/index.js';
import type { LearnedSearch, LearnedWordsStore } from './learnedWords.js';
import { queryKeyOf, queryWordsOf } from './queryWords.js';

/** How long after a query a use still counts as its outcome. */
const QUERY_WINDOW_MS = 15 * 60_000;
/** The most words one query teaches. */
const WORDS_PER_QUERY = 16;

interface PendingQuery {
  words: string[];
  key: string;
  at: number;
  /** Tools already credited with this query (a build then an equip counts once). */
  credited: Set<string>;
  /** The tools its answer showed: a call of an equipped tool counts only for those. */
  shown: ReadonlySet<string>;
}

/** Per-session memory of the last query, and the recording of its outcome. */
export class SearchLearning {
  readonly #store: LearnedWordsStore;
  /** Hears what the store holds after each record. */
  readonly #onLearned: (learned: LearnedSearch) => void;
  readonly #now: () => number;
  readonly #work: WorkInFlight | undefined;
  readonly #pending = new WeakMap<object, PendingQuery>();

  /** `work`: where the owner tracks each record's write, so its close can wait for them. */
  constructor(
    store: LearnedWordsStore,
    onLearned: (learned: LearnedSearch) => void,
    options: { now?: () => number; work?: WorkInFlight } = {},
  ) {
    this.#store = store;
    this.#onLearned = onLearned;
    this.#now = options.now ?? Date.now;
    this.#work = options.work;
  }

  /** A session searched with `query`, and the answer showed the tools `shown` (ids). */
  queried(session: object, query: string, shown: readonly string[] = []): void {
    const words = [...new Set(queryWordsOf(query))].slice(0, WORDS_PER_QUERY);
    if (words.length) {
      this.#pending.set(session, { words, key: queryKeyOf(query), at: this.#now(), credited: new Set(), shown: new Set(shown) });
    }
  }

  /**
   * Whether a call of the equipped tool `toolId` teaches the session's last query: it is recent,
   * its answer showed the tool, and the tool is not credited yet. A cheap check for the call path;
   * a call of a tool the answer did not show is other work, not this query's outcome.
   */
  expects(session: object, toolId: string): boolean {
    const pending = this.#pending.get(session);
    return (
      pending !== undefined && pending.shown.has(toolId) && !pending.credited.has(toolId) && this.#now() - pending.at <= QUERY_WINDOW_MS
    );
  }

  /**
   * A session used these tools (by id): credit them with its last query, if recent. Returns
   * nothing when there is nothing to record, so a call of an equipped tool (the forwarding hot
   * path) costs a lookup and no promise.
   */
  used(session: object, toolIds: readonly string[]): Promise<void> | undefined {
    const pending = this.#pending.get(session);
    if (!pending || this.#now() - pending.at > QUERY_WINDOW_MS) return undefined;
    const fresh = toolIds.filter((id) => !pending.credited.has(id));
    if (!fresh.length) return undefined;
    for (const id of fresh) pending.credited.add(id);
    const recording = this.#store.record(fresh, pending.words, pending.key).then((learned) => learned && this.#onLearned(learned));
    return this.#work ? this.#work.track(recording) : recording;
  }
}
