// Runs once before any test file: starts the throwaway PostgreSQL server the store tests share and
// provides its URL, or, when the server binaries are missing or fail to start, the one line that
// says why, so each Postgres test fails with it (never a silent skip) and no other test is held up.
import type { TestProject } from 'vitest/node';
import { startPostgresServer } from './helpers/postgresServer.js';

/** What the store tests are given: a server URL, or why there is none. */
export type ProvidedPostgres = { url: string } | { unavailable: string };

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: ProvidedPostgres;
  }
}

export default async function startPostgres(project: TestProject): Promise<() => Promise<void>> {
  try {
    const server = await startPostgresServer();
    project.provide('postgres', { url: server.url });
    return () => server.destroy();
  } catch (error) {
    project.provide('postgres', { unavailable: error instanceof Error ? error.message : String(error) });
    return () => Promise.resolve();
  }
}
