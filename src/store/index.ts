// store: the one layer that owns loadout's state — typed collections per kind (catalog,
// discovery records, toolsets, equipped sets, 2025 sessions, learned words, optimization, OAuth
// tokens) with two backends: Postgres (versioned migrations, tokens encrypted, the change bus
// replicas hear each other on) and files (a data dir in today's formats, changes through fs.watch).
export { openPostgresStore, type PostgresStoreOptions } from './postgresStore.js';
export type { TeamStore, RecordCollection } from './store.js';
export type { SchemaState } from './migrations.js';
export { DOCUMENT_KINDS, LAST_STOP_KEY, LEARNED_WORDS_KEY, type DocumentKind } from './records.js';
export { openFileStore } from './fileStore.js';
export { REVISION_LEDGER_FILE } from './revisionLedger.js';
