// The toolset equipped at the last stop, which a new session is given (unless --equip says
// otherwise), one per principal. The local caller's (stdio, HTTP without an identity) is
// state.json's activeToolset, or in store mode the store's equipped record under LAST_STOP_KEY,
// where `loadout toolset equip` puts it too. An identified caller's (a static token, an issuer's
// subject) is its own equipped record `@last-stop.<principal id>` (principals/ in files mode): one
// caller's equip is never what another caller's new session starts with. In store mode no replica
// writes state.json: an equip remembered through one replica is what a new session on any replica gets.
import type { StateStore } from '../config/index.js';
import type { Principal } from '../identity/index.js';
import { LAST_STOP_KEY, type TeamStore } from '../store/index.js';

/** Where the toolset equipped at the last stop is kept. */
export interface LastStop {
  read(): Promise<string | null>;
  /** Keep `current()`, asked as the write runs: of concurrent writes, the last names the toolset equipped then. */
  write(current: () => string | null): Promise<void>;
}

/** Where the last stops are kept: state.json and the equipped records (files), or the store's. */
export interface LastStopPlaces {
  state: StateStore;
  equipped: TeamStore['equipped'];
  store: TeamStore | undefined;
}

/** The last stop of `principal`. */
export function lastStopOf(places: LastStopPlaces, principal: Pick<Principal, 'id'>): LastStop {
  const { state, store } = places;
  if (principal.id !== 'local') return recordedLastStop(places.equipped, `${LAST_STOP_KEY}.${principal.id}`);
  if (store) return recordedLastStop(store.equipped, LAST_STOP_KEY);
  return {
    read: async () => (await state.read()).activeToolset,
    write: async (current) => void (await state.update((kept) => ({ ...kept, activeToolset: current() }))),
  };
}

function recordedLastStop(equipped: TeamStore['equipped'], key: string): LastStop {
  return {
    read: async () => (await equipped.get(key))?.value.toolset ?? null,
    write: async (current) => void (await equipped.update(key, () => ({ toolset: current() }))),
  };
}

/**
 * Read the store's @last-stop at start, and every last stop (the local caller's and each
 * principal's `@last-stop.<id>`) on each change of it, so the store's local copy holds them before
 * an outage: a new session opened while the store is away gets the set remembered, not an error.
 */
export function keepLastStopCopied(store: TeamStore): void {
  const keepCopy = (key: string): void => void store.equipped.get(key).catch(() => undefined);
  keepCopy(LAST_STOP_KEY);
  // A gateway's store listens (its catalog follows the store the same way); the store ends this with its close.
  store.onChange((change) => {
    if (change.type === 'resync') keepCopy(LAST_STOP_KEY);
    else if (change.kind === 'equipped' && (change.key === LAST_STOP_KEY || change.key.startsWith(`${LAST_STOP_KEY}.`)))
      keepCopy(change.key);
  });
}
