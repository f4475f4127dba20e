// store: the one layer that owns loadout's state — typed collections per kind (catalog,
// discovery records, toolsets, equipped sets, 2025 sessions, learned words, optimization, clients' habits, OAuth
// tokens) with two backends: Postgres (versioned migrations, tokens encrypted, the change bus
// replicas hear each other on) and files (a data dir in today's formats, changes through fs.watch).
export { openPostgresStore } from './postgresOnDemand.js';
export type { PostgresStoreOptions } from './postgresStore.js';
export type {
  TeamStore,
  FleetStore,
  StoreFleet,
  StoreChange,
  AuditTable,
  AuditRow,
  AuditRowFilter,
  LimitBuckets,
  ReplicaTable,
  RecordCollection,
  ListedRecord,
  OAuthCollection,
  OAuthRead,
  StoredRecord,
  PutOptions,
} from './store.js';
export type { ChangeBusOptions } from './changeBus.js';
export { readMigrations, type SchemaState, type Migration } from './migrations.js';
export { parseStoreUrl, type StoreUrl } from './storeUrl.js';
export { isStoreAway } from './storeFaults.js';
export { ConnectionLossGuard } from './connectionLossGuard.js';
export { LOCAL_COPY_DIR } from './localCopy.js';
export { SecretBox, MIN_SECRET_KEY_CHARS } from './secretBox.js';
export {
  DOCUMENT_KINDS,
  LAST_STOP_KEY,
  LEARNED_WORDS_KEY,
  ROW_FORMAT,
  StoreKeySchema,
  type DocumentKind,
  type StoreKind,
  type RecordOf,
  type CatalogEntryRecord,
  type SessionRecord,
  type ReplicaHeartbeat,
  type HeardReplica,
} from './records.js';
export { openFileStore } from './fileStore.js';
export { openDataDirStore, dataDirRecords, dataDirToolsets } from './dataDirStore.js';
export { REVISION_LEDGER_FILE } from './revisionLedger.js';
