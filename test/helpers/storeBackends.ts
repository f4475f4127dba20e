// The store backends the contract tests run against, each opened fresh per test. Postgres gets a
// database of its own on the test server; the files backend joins this list when it exists.
import { openPostgresStore, type PostgresStoreOptions, type TeamStore } from '../../src/store/index.js';
import { createDatabase, postgresServerUrl } from './postgres.js';

/** A 32+ character key for the tests (never a real one). */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdefghijklmnop';

/** One backend (`url`: where a test may reach the state directly): how to open two stores on the same state (two replicas), and how to drop it. */
export interface StoreBackend {
  name: string;
  /** A fresh, empty state; open() gives one replica on it (call it twice for two). */
  create(): Promise<{ url: string; open(options?: Partial<PostgresStoreOptions>): Promise<TeamStore>; drop(): Promise<void> }>;
}

export const STORE_BACKENDS: StoreBackend[] = [
  {
    name: 'postgres',
    async create() {
      const database = await createDatabase(postgresServerUrl());
      return {
        url: database.url,
        open: (options = {}) =>
          openPostgresStore({
            url: database.url,
            secretKey: TEST_SECRET_KEY,
            bus: { heartbeatMs: 500, reconnectBaseMs: 100, reconnectMaxMs: 1000 },
            ...options,
          }),
        drop: database.drop,
      };
    },
  },
];

/** Resolves with the first change `store` hears that `match` accepts. */
export function nextChange<T>(
  store: TeamStore,
  match: (change: Parameters<Parameters<TeamStore['onChange']>[0]>[0]) => T | undefined,
): Promise<T> {
  return new Promise((resolve) => {
    const stop = store.onChange((change) => {
      const matched = match(change);
      if (matched === undefined) return;
      stop();
      resolve(matched);
    });
  });
}
