// A database of its own for each test file, on the server test/postgresSetup.ts started: created
// before the file's tests, dropped after. Where no server could be started, every test using it
// fails with the setup's one line.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, inject } from 'vitest';

/** The shared test server's URL, or an error naming why there is none. */
export function postgresServerUrl(): string {
  const provided = inject('postgres');
  if ('unavailable' in provided) throw new Error(provided.unavailable);
  return provided.url;
}

/** The URL of `url` with another database name. */
export function withDatabase(url: string, database: string): string {
  const next = new URL(url);
  next.pathname = `/${database}`;
  return next.toString();
}

/** Create an empty database on the server of `serverUrl`; returns its URL and how to drop it. */
export async function createDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `loadout_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(serverUrl, name),
    async drop() {
      const sql = postgres(serverUrl, { max: 1, onnotice: () => undefined });
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await sql.end();
      }
    },
  };
}

/** Registers the hooks; call the returned function inside a test for the file's database URL. */
export function usePostgresDatabase(): () => string {
  let database: { url: string; drop: () => Promise<void> } | undefined;
  let failure: Error | undefined;
  beforeAll(async () => {
    try {
      database = await createDatabase(postgresServerUrl());
    } catch (error) {
      failure = error as Error;
    }
  });
  afterAll(async () => {
    await database?.drop();
  });
  return () => {
    if (failure) throw failure;
    if (!database) throw new Error('usePostgresDatabase: the database exists only while the tests run');
    return database.url;
  };
}
