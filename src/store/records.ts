// What the store holds, kind by kind: each kind's table, its record schema (the single source of
// its type) and the row format this loadout writes. A row of a newer format is refused, never
// guessed at. Deep shapes owned by higher layers (a catalog entry's definitions, learned evidence)
// are checked only as far as the store must know them; their owners parse the rest.
import * as z from 'zod';
import {
  ClientRecordSchema,
  DiscoveryRecordSchema,
  EquippedRecordSchema,
  LearnedWordsFileSchema,
  OAuthRecordSchema,
  ServerOptimizationSchema,
  ToolsetNameSchema,
  ToolsetSchema,
} from '../config/index.js';
import { LoadoutError } from '../shared/index.js';

/** One server's catalog entry as catalog.json holds it: definitions, list failures, era verdict, tool fingerprints (`hashes`). */
export const CatalogEntryRecordSchema = z.looseObject({
  discoveredAt: z.string(),
  tools: z.array(z.looseObject({ name: z.string() })),
  // Each failure as {text, rpcCode?}; an entry written before the code was kept holds the text alone.
  listFailures: z.record(z.string(), z.union([z.string(), z.looseObject({ text: z.string() })])).optional(),
  era: z.unknown().optional(),
  /** toolHash of each tool by name: the fingerprint that tells a changed definition. */
  hashes: z.record(z.string(), z.string()).optional(),
});

/** The key of the equipped set state.json remembers for the next start (no principal hash looks like it). */
export const LAST_STOP_KEY = '@last-stop';

/**
 * A 2025-era session: what any replica needs to serve its next request. `protocolVersion`,
 * `clientCapabilities` and `clientInfo` are what the client's initialize asked for (a replica
 * resuming the session replays it); `activeAt` moves on while the session is used, at most every
 * few minutes, so an idle one can be told from a live one fleet-wide.
 */
export const SessionRecordSchema = z.strictObject({
  principal: z.string(),
  protocolVersion: z.string(),
  clientCapabilities: z.looseObject({}),
  clientInfo: z.looseObject({ name: z.string(), version: z.string() }).optional(),
  toolset: ToolsetNameSchema.nullable(),
  createdAt: z.iso.datetime(),
  activeAt: z.iso.datetime().optional(),
  /**
   * The client's answers to mid-call requests (sampling, elicitation) that reached a replica other
   * than the one whose call is waiting on them: JSON-RPC responses, taken out by that replica.
   */
  answers: z.array(z.looseObject({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number()]) })).optional(),
});

/** What a replica says of itself in each heartbeat (Postgres mode): the row `replica_heartbeats` keeps of it. */
export const ReplicaHeartbeatSchema = z.strictObject({
  /** The replica's id, drawn at its start (`replicaId`): what audit records and telemetry name it by. */
  id: z.string().min(1).max(200),
  host: z.string(),
  pid: z.number().int().nonnegative(),
  version: z.string(),
  /** When the replica started (ISO 8601). */
  started: z.iso.datetime({ offset: true }),
  /** Client sessions it serves now. */
  sessions: z.number().int().nonnegative(),
  /** Whether its change bus was listening (LISTEN/NOTIFY) at the beat. */
  listening: z.boolean(),
});

/** A heartbeat as read back: the replica's, with when the store last heard it (the database's clock). */
export const HeardReplicaSchema = ReplicaHeartbeatSchema.extend({ lastHeard: z.iso.datetime({ offset: true }) });

export type ReplicaHeartbeat = z.infer<typeof ReplicaHeartbeatSchema>;
export type HeardReplica = z.infer<typeof HeardReplicaSchema>;

/** The key of the one learned-words document. */
export const LEARNED_WORDS_KEY = 'search';

/**
 * Every plain (unencrypted) kind: its table and record schema. Table names are constants, never
 * input. `asGiven`: the record is checked but kept as it came, keys in their order (what servers
 * sent, passed through untouched); otherwise the parsed record is kept.
 */
export const DOCUMENT_KINDS = {
  catalog: { table: 'catalog_entries', schema: CatalogEntryRecordSchema, asGiven: true },
  discovery: { table: 'discovery_records', schema: DiscoveryRecordSchema, asGiven: false },
  toolsets: { table: 'toolsets', schema: ToolsetSchema, asGiven: false },
  equipped: { table: 'equipped_sets', schema: EquippedRecordSchema, asGiven: false },
  sessions: { table: 'sessions', schema: SessionRecordSchema, asGiven: false },
  learnedWords: { table: 'learned_words', schema: LearnedWordsFileSchema, asGiven: true },
  optimization: { table: 'optimization_servers', schema: ServerOptimizationSchema, asGiven: false },
  clients: { table: 'client_habits', schema: ClientRecordSchema, asGiven: false },
} as const;

/** The OAuth kind: its table and the record kept encrypted in it. */
export const OAUTH_KIND = { table: 'oauth_records', schema: OAuthRecordSchema } as const;

/** A kind of plain document. */
export type DocumentKind = keyof typeof DOCUMENT_KINDS;
/** Any kind the store holds. */
export type StoreKind = DocumentKind | 'oauth';
/** The record type of a kind. */
export type RecordOf<K extends DocumentKind> = z.infer<(typeof DOCUMENT_KINDS)[K]['schema']>;

export type CatalogEntryRecord = z.infer<typeof CatalogEntryRecordSchema>;
export type SessionRecord = z.infer<typeof SessionRecordSchema>;

/** The row format this loadout writes and the newest it reads; a row with a higher one came from a newer loadout. */
export const ROW_FORMAT = 1;

/** Keys: non-empty, at most 200 characters, so a change notice (8,000 bytes at most) always fits. */
export const StoreKeySchema = z.string().min(1).max(200);

/** Kinds by table name, for change notices (which carry the table). */
export const KIND_OF_TABLE: ReadonlyMap<string, StoreKind> = new Map<string, StoreKind>([
  ...Object.entries(DOCUMENT_KINDS).map(([kind, { table }]) => [table, kind as DocumentKind] as const),
  [OAUTH_KIND.table, 'oauth'],
]);

/** INVALID_ARGUMENT unless `key` is a valid key. */
export function validKey(kind: string, key: string): void {
  if (!StoreKeySchema.safeParse(key).success)
    throw new LoadoutError('INVALID_ARGUMENT', `${kind} key must be 1 to 200 characters, got ${JSON.stringify(key.slice(0, 40))}`);
}

/** The one line of a write refused because the record moved on since `ifRevision`. */
export function conflict(kind: string, key: string, ifRevision: number | null | undefined): LoadoutError {
  const expected = ifRevision === null ? 'none to exist' : `revision ${ifRevision}`;
  return new LoadoutError(
    'STORE_CONFLICT',
    `${kind} '${key}' was changed by another writer (expected ${expected}); read it again and retry`,
  );
}
