// Whether a session's client re-reads tools/list after a tools list_changed, learned from what it
// does, and so whether an equip answer is worth holding for that re-read. Claude Code re-lists at
// once; Codex CLI does not re-list at all by default, and with its list-change flag on re-lists only
// after the answer has arrived; Gemini CLI re-lists at once but folds the new list into the
// conversation a little later. Holding the answer helps only the first kind and costs the others
// the whole wait (docs/clients.md). What a session learns is kept for the client's next sessions
// (clientHabits.ts), so a client that never re-lists waits once, not once per session.
import type { RelistMemory } from './clientHabits.js';
import { knownClient } from './knownClients.js';

/** What the session has seen its client do after an announced tools change. */
export type RelistHabit =
  /** Nothing seen yet: hold the answer, unless the client's name says it never helps. */
  | 'unknown'
  /** Re-listed while an answer was held: keep holding. */
  | 'relists'
  /** Re-lists, but only after the answer it was waiting for: holding is useless, the tools still come. */
  | 'relists-after-answer'
  /** Did not re-list while an answer was held, and not since: the tools reach the model only through call-tool. */
  | 'never';

// How long after a list_changed a list still unread means the client does not re-read (Claude Code
// and Gemini CLI re-read within tens of milliseconds).
const UNREAD_AFTER_MS = 1000;

/** One session's record of its client's re-reads. */
export class RelistLearning {
  #habit: RelistHabit = 'unknown';
  #settleMs = 0;
  // A tools list_changed was sent and the client has not re-read the list since.
  #unread = false;
  #announcedAtMs = 0;
  // The last hold ended at its deadline with the list unread.
  #heldInVain = false;
  // What the client's earlier sessions learned, once recalled (remembered again only when it changes).
  #remembered: RelistHabit | undefined;
  #recalled: Promise<void> | undefined;
  #remembering: Promise<void> = Promise.resolve();

  /**
   * `clientName`: what the client calls itself (initialize's clientInfo.name), once known;
   * `memory`: where its habit is kept across sessions (none: learned anew each session).
   */
  constructor(
    private readonly clientName: () => string | undefined,
    private readonly memory?: RelistMemory,
  ) {}

  get habit(): RelistHabit {
    if (this.#habit === 'unknown') {
      // A known client's habit is taken before it shows it: its first equip is answered as the later ones would be.
      const known = knownClient(this.clientName())?.relist;
      if (known) {
        this.#habit = known.habit;
        this.#settleMs = known.settleMs ?? 0;
      }
    }
    return this.#habit;
  }

  /**
   * Take up what the client's earlier sessions learned (once; before the first hold is decided),
   * unless its name or this session already told. True when a remembered habit was taken.
   */
  async recall(): Promise<boolean> {
    // Before initialize the client has no name yet: a change announced then recalls nothing, and is no answer for later.
    if (this.clientName() === undefined) return false;
    let adopted = false;
    this.#recalled ??= (async () => {
      this.#remembered = await this.memory?.recall();
      if (this.#remembered && this.habit === 'unknown') {
        this.#habit = this.#remembered;
        adopted = true;
      }
    })();
    await this.#recalled;
    return adopted;
  }

  /** Settles once what this session learned so far is kept (a failed write is logged, never thrown). */
  remembered(): Promise<void> {
    return this.#remembering;
  }

  /** Whether an equip answer should wait for the client's re-read. */
  get holdsAnswers(): boolean {
    return this.habit === 'unknown' || this.habit === 'relists';
  }

  /** How long to keep holding after the re-read has been answered. */
  get settleMs(): number {
    return this.habit === 'relists' ? this.#settleMs : 0;
  }

  /** Whether the client has shown it never re-reads, so equipped tools reach it only through call-tool. */
  get neverRelists(): boolean {
    return this.habit === 'never';
  }

  /** A tools list_changed went out. */
  announced(): void {
    // The list is still unread since an earlier change, long past any prompt re-read: the client
    // does not re-read at all (Codex CLI by default), though no answer was ever held for it.
    if (this.#unread && Date.now() - this.#announcedAtMs >= UNREAD_AFTER_MS) this.#learned('never');
    this.#unread = true;
    this.#announcedAtMs = Date.now();
  }

  /** The client read tools/list. */
  listed(): void {
    if (this.#unread && (this.#heldInVain || this.#habit === 'never')) this.#learned('relists-after-answer');
    this.#unread = false;
    this.#heldInVain = false;
  }

  /** A held equip answer was released: after the re-read, or at the deadline without one. */
  released(relisted: boolean): void {
    if (relisted) {
      if (this.#habit === 'unknown') this.#learned('relists');
      return;
    }
    this.#heldInVain = true;
    if (this.#habit !== 'relists-after-answer') this.#learned('never');
  }

  #learned(habit: Exclude<RelistHabit, 'unknown'>): void {
    this.#habit = habit;
    const memory = this.memory;
    if (!memory || habit === this.#remembered) return;
    this.#remembered = habit;
    // Kept in order: the last habit learned is the one the next session finds.
    this.#remembering = this.#remembering.then(() => memory.remember(habit));
  }
}
