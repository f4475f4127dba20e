// Schema migrations: versioned SQL files (assets/migrations/NNNN_name.sql) applied in order, in
// one transaction under an advisory lock, so replicas starting together migrate once. A database
// whose schema is newer than the files this loadout ships is refused with one line.
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from 'postgres';
import { LoadoutError } from '../shared/index.js';
import type { StoreUrl } from './storeUrl.js';

/** One migration file. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Where the schema of a database stands against this loadout's migrations. */
export interface SchemaState {
  /** The highest version applied (0: none). */
  version: number;
  /** The highest version this loadout knows. */
  knownVersion: number;
  applied: Array<{ version: number; name: string; appliedAt: string }>;
  /** Known migrations not applied yet, by name. */
  pending: string[];
}

// Any constant: every loadout replica takes the same lock.
const MIGRATION_LOCK_ID = 7_264_163_101;
const FILE_NAME = /^(\d{4})_([\w-]+)\.sql$/;

/** The migrations folder shipped with loadout: assets/ at the package root, above dist/src/store or dist/bundle. */
export function defaultMigrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 5; up++) {
    const candidate = path.join(dir, 'assets', 'migrations');
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  throw new LoadoutError(
    'STORE_UNAVAILABLE',
    `the store's migration files (assets/migrations) are missing from this loadout install; reinstall it`,
  );
}

/** The migrations in `dir`, by version; versions must run 1, 2, 3… with no gap. */
export async function readMigrations(dir = defaultMigrationsDir()): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new LoadoutError('STORE_UNAVAILABLE', `migration file ${path.join(dir, file)} is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== migrations.length + 1)
      throw new LoadoutError('STORE_UNAVAILABLE', `migration ${file} is out of sequence: expected version ${migrations.length + 1}`);
    migrations.push({ version, name: `${match[1]}_${match[2]}`, sql: await readFile(path.join(dir, file), 'utf8') });
  }
  return migrations;
}

const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS store_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/** Apply the pending migrations; refuses a schema newer than `migrations`. Returns the names applied. */
export async function migrate(sql: Sql, url: StoreUrl, migrations: readonly Migration[]): Promise<string[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`;
    await tx.unsafe(CREATE_MIGRATIONS_TABLE);
    const rows = await tx<Array<{ version: number }>>`SELECT version FROM store_migrations ORDER BY version`;
    const current = rows.at(-1)?.version ?? 0;
    refuseNewer(url, current, migrations.length);
    const applied: string[] = [];
    for (const migration of migrations.slice(current)) {
      await tx.unsafe(migration.sql);
      await tx`INSERT INTO store_migrations (version, name) VALUES (${migration.version}, ${migration.name})`;
      applied.push(migration.name);
    }
    return applied;
  });
}

/** Where the schema stands, without changing it. */
export async function schemaState(sql: Sql, migrations: readonly Migration[]): Promise<SchemaState> {
  const [table] = await sql<Array<{ exists: boolean }>>`SELECT to_regclass('store_migrations') IS NOT NULL AS exists`;
  const rows = table?.exists
    ? await sql<
        Array<{ version: number; name: string; applied_at: Date }>
      >`SELECT version, name, applied_at FROM store_migrations ORDER BY version`
    : [];
  const version = rows.at(-1)?.version ?? 0;
  return {
    version,
    knownVersion: migrations.length,
    applied: rows.map((row) => ({ version: row.version, name: row.name, appliedAt: row.applied_at.toISOString() })),
    pending: migrations.slice(version).map((migration) => migration.name),
  };
}

/** The one line for a database migrated by a newer loadout. */
export function refuseNewer(url: StoreUrl, version: number, knownVersion: number): void {
  if (version <= knownVersion) return;
  throw new LoadoutError(
    'STORE_SCHEMA_NEWER',
    `store ${url.masked}: its schema is at version ${version}, newer than this loadout knows (${knownVersion}); upgrade loadout on this machine`,
  );
}
