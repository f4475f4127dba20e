// What the gateway remembers of each MCP client across its sessions and processes: whether it
// re-reads tools/list after a list_changed (relistHabit.ts), by the name and version it gives at
// initialize, in the store's `clients` kind (clients.json in the data dir; the store's table in
// store mode). A client that never re-lists and opens a new session on every run (Qwen Code's
// `qwen -p`) then pays the re-list hold once, not on every run. The version is part of the key:
// a new version may re-list where the old one did not, and costs one hold to learn again.
import type { ClientRecord } from '../config/index.js';
import { StoreKeySchema, type TeamStore } from '../store/index.js';
import { errorMessage, type Logger } from '../shared/index.js';

/** A learned re-list habit as kept (see RelistHabit). */
export type RememberedHabit = ClientRecord['relist'];

/** A client as it names itself at initialize. */
export interface ClientInfo {
  readonly name: string;
  readonly version: string;
}

/** What the sessions of one client remember of its habit. */
export interface RelistMemory {
  /** The habit an earlier session learned, if any. */
  recall(): Promise<RememberedHabit | undefined>;
  /** Keep `habit` for the client's next sessions; a failed write is logged, never thrown. */
  remember(habit: RememberedHabit): Promise<void>;
}

/** The remembered habits of every client, kept in the store's `clients` records. */
export class ClientHabits {
  readonly #records: TeamStore['clients'];
  readonly #logger: Logger;
  // Read once per process and client: a modern HTTP session lives one request, and asks at every equip.
  readonly #read = new Map<string, Promise<RememberedHabit | undefined>>();

  constructor(records: TeamStore['clients'], logger: Logger) {
    this.#records = records;
    this.#logger = logger.child({ mod: 'gateway' });
  }

  /** The memory of the client `client()` names once it has initialized; none for a key too long to keep. */
  of(client: () => ClientInfo | undefined): RelistMemory {
    const keyOf = (): string | undefined => {
      const info = client();
      const key = info && `${info.name}@${info.version}`;
      return key !== undefined && StoreKeySchema.safeParse(key).success ? key : undefined;
    };
    return {
      recall: () => {
        const key = keyOf();
        return key === undefined ? Promise.resolve(undefined) : this.#recall(key);
      },
      remember: async (habit) => {
        const key = keyOf();
        if (key === undefined) return;
        this.#read.set(key, Promise.resolve(habit));
        try {
          await this.#records.put(key, { relist: habit, learnedAt: new Date().toISOString() });
          this.#logger.info({ client: key, relist: habit }, "client's re-list habit remembered for its next sessions");
        } catch (error) {
          this.#logger.warn({ client: key, err: errorMessage(error) }, "could not remember the client's re-list habit");
        }
      },
    };
  }

  #recall(key: string): Promise<RememberedHabit | undefined> {
    let read = this.#read.get(key);
    if (!read) {
      read = this.#records.get(key).then(
        (record) => record?.value.relist,
        (error: unknown) => {
          // Unread, the client is learned again: one hold, never a failed equip.
          this.#logger.debug({ client: key, err: errorMessage(error) }, "could not read the client's re-list habit");
          this.#read.delete(key);
          return undefined;
        },
      );
      this.#read.set(key, read);
    }
    return read;
  }
}
