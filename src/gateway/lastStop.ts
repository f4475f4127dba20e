// The toolset equipped at the last stop, which a new session is given (unless --equip says
// otherwise): state.json's activeToolset, or in store mode the store's equipped record under
// LAST_STOP_KEY, where `loadout toolset equip` puts it too. In store mode no replica writes
// state.json: an equip remembered through one replica is what a new session on any replica gets.
import type { StateStore } from '../config/index.js';
import { LAST_STOP_KEY, type TeamStore } from '../store/index.js';

/** Where the toolset equipped at the last stop is kept. */
export interface LastStop {
  read(): Promise<string | null>;
  /** Keep `current()`, asked as the write runs: of concurrent writes, the last names the toolset equipped then. */
  write(current: () => string | null): Promise<void>;
}

/** The store's @last-stop record when there is a store, else state.json. */
export function lastStopOf(state: StateStore, store: TeamStore | undefined): LastStop {
  if (store) {
    const read = async (): Promise<string | null> => (await store.equipped.get(LAST_STOP_KEY))?.value.toolset ?? null;
    // Read at start and on each change of it, so the store's local copy holds it before an outage:
    // a new session opened while the store is away gets the set remembered, not an error.
    const keepCopy = (): void => void read().catch(() => undefined);
    keepCopy();
    // A gateway's store listens (its catalog follows the store the same way); the store ends this with its close.
    store.onChange((change) => {
      if (change.type === 'resync' || (change.kind === 'equipped' && change.key === LAST_STOP_KEY)) keepCopy();
    });
    return {
      read,
      write: async (current) => void (await store.equipped.update(LAST_STOP_KEY, () => ({ toolset: current() }))),
    };
  }
  return {
    read: async () => (await state.read()).activeToolset,
    write: async (current) => void (await state.update((kept) => ({ ...kept, activeToolset: current() }))),
  };
}
