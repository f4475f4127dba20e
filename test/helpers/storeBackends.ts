// The store backends the contract tests run against, each opened fresh per test: Postgres gets a
// database of its own on the test server, files a temp data dir (and toolsets dir) of their own.
// Where the backends honestly differ (a record "from a newer loadout", OAuth tokens at rest), each
// says what it holds at rest, and the tests assert that by name.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterEach, beforeEach } from 'vitest';
import { openFileStore, openPostgresStore, type PostgresStoreOptions, type TeamStore } from '../../src/store/index.js';
import { createDatabase, postgresServerUrl } from './postgres.js';

/** A 32+ character key for the tests (never a real one). */
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdefghijklmnop';

/** A fresh state of one backend: open() gives one replica on it (call it twice for two). */
export interface BackendState {
  open(options?: Partial<PostgresStoreOptions>): Promise<TeamStore>;
  drop(): Promise<void>;
  /** Make the stored toolset `key` one a newer loadout wrote (a shape this one does not know). */
  writeNewerToolset(key: string): Promise<void>;
  /** The OAuth record of `server` as it lies at rest, and its file mode where it is a file. */
  oauthAtRest(server: string): Promise<{ bytes: string; mode?: number }>;
  /** Damage the OAuth record of `server` at rest (Postgres: its ciphertext; files: its JSON). */
  damageOAuth(server: string): Promise<void>;
}

/** One backend and what it promises beyond the common contract. */
export interface StoreBackend {
  name: string;
  /** OAuth tokens encrypted at rest with LOADOUT_SECRET_KEY (Postgres); files mode keeps them in 0600 files, as it always has. */
  sealsOAuth: boolean;
  /** What a store says when it meets a record written by a newer loadout. */
  newerRecordError: RegExp;
  create(): Promise<BackendState>;
}

const sql = (url: string) => postgres(url, { max: 1, onnotice: () => undefined });

export const STORE_BACKENDS: StoreBackend[] = [
  {
    name: 'postgres',
    sealsOAuth: true,
    newerRecordError:
      /^toolsets 'dev' was written by a newer loadout \(row format 2; this one reads up to 1\); upgrade loadout on this machine$/,
    async create() {
      const database = await createDatabase(postgresServerUrl());
      return {
        open: (options = {}) =>
          openPostgresStore({
            url: database.url,
            secretKey: TEST_SECRET_KEY,
            bus: { heartbeatMs: 500, reconnectBaseMs: 100, reconnectMaxMs: 1000 },
            ...options,
          }),
        drop: database.drop,
        async writeNewerToolset(key) {
          const admin = sql(database.url);
          try {
            await admin`UPDATE toolsets SET format = 2, doc = ${`{"name":"${key}","shape":"new"}`}::json WHERE key = ${key}`;
          } finally {
            await admin.end();
          }
        },
        async oauthAtRest(server) {
          const admin = sql(database.url);
          try {
            const [row] = await admin<Array<{ ciphertext: Buffer }>>`SELECT ciphertext FROM oauth_records WHERE key = ${server}`;
            return { bytes: row!.ciphertext.toString('latin1') };
          } finally {
            await admin.end();
          }
        },
        async damageOAuth(server) {
          const admin = sql(database.url);
          try {
            await admin`UPDATE oauth_records SET ciphertext = ${Buffer.from('damaged')} WHERE key = ${server}`;
          } finally {
            await admin.end();
          }
        },
      };
    },
  },
  {
    name: 'files',
    sealsOAuth: false,
    newerRecordError: /^\S+\/toolsets\/dev\.yaml:2:1: .*shape/,
    async create() {
      const root = await mkdtemp(path.join(tmpdir(), 'loadout-store-'));
      const dataDir = path.join(root, 'data');
      const toolsetsDir = path.join(root, 'config', 'toolsets');
      return {
        // Files have no pool and no key: only `listen` means something to them.
        open: (options = {}) => openFileStore({ dataDir, toolsetsDir, listen: options.listen }),
        drop: () => rm(root, { recursive: true, force: true }),
        writeNewerToolset: (key) => writeFile(path.join(toolsetsDir, `${key}.yaml`), `name: ${key}\nshape: new\n`),
        async oauthAtRest(server) {
          const file = path.join(dataDir, 'oauth', `${server}.json`);
          return { bytes: await readFile(file, 'latin1'), mode: (await stat(file)).mode & 0o777 };
        },
        damageOAuth: (server) => writeFile(path.join(dataDir, 'oauth', `${server}.json`), '{"serverUrl": '),
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

/** Registers hooks giving each test a fresh Postgres database; the returned function opens a replica on it (not listening), closed after the test. */
export function usePostgresReplicas(): () => Promise<TeamStore> {
  return useBackendReplicas(STORE_BACKENDS.find((each) => each.name === 'postgres')!);
}

/** Registers hooks giving each test a fresh state of `backend`; the returned function opens a replica on it (not listening), closed after the test. */
export function useBackendReplicas(backend: StoreBackend): () => Promise<TeamStore> {
  let state: BackendState | undefined;
  const stores: TeamStore[] = [];
  beforeEach(async () => {
    state = await backend.create();
  });
  afterEach(async () => {
    await Promise.allSettled(stores.splice(0).map((store) => store.close()));
    await state?.drop();
  });
  return async () => {
    const store = await state!.open({ listen: false });
    stores.push(store);
    return store;
  };
}

/** Registers hooks giving each test a fresh state of `backend` with one replica open on it (not listening), closed after the test; call the returned function inside a test for that replica. */
export function useBackendStore(backend: StoreBackend): () => TeamStore {
  const open = useBackendReplicas(backend);
  let store: TeamStore | undefined;
  beforeEach(async () => {
    store = await open();
  });
  return () => {
    if (!store) throw new Error('useBackendStore: the store is open only while a test runs');
    return store;
  };
}
