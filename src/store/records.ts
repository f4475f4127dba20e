// What the store holds, kind by kind: each kind's table, its record schema (the single source of
// its type) and the row format this loadout writes. A row of a newer format is refused, never
// guessed at. Deep shapes owned by higher layers (a catalog entry's definitions, learned evidence)
// are checked only as far as the store must know them; their owners parse the rest.
import * as z from 'zod';
import { OAuthRecordSchema, ServerOptimizationSchema, ToolsetNameSchema, ToolsetSchema } from '../config/index.js';
import { FailureSchema } from '../shared/index.js';

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

/** The last failed discovery of one server (discovery.json, version 2: the failure's code beside its text). */
export const DiscoveryRecordSchema = z.strictObject({
  failedAt: z.iso.datetime(),
  failures: z.number().int().positive(),
  retryAt: z.iso.datetime(),
  failure: FailureSchema,
  config: z.string(),
});

/** A principal's equipped set (principals/<id>.json), or, under LAST_STOP_KEY, the one state.json re-equips at start. */
export const EquippedRecordSchema = z.strictObject({ toolset: ToolsetNameSchema.nullable() });

/** The key of the equipped set state.json remembers for the next start (no principal hash looks like it). */
export const LAST_STOP_KEY = '@last-stop';

/** A 2025-era session: what any replica needs to serve its next request. */
export const SessionRecordSchema = z.strictObject({
  principal: z.string(),
  protocolVersion: z.string(),
  clientCapabilities: z.looseObject({}),
  toolset: ToolsetNameSchema.nullable(),
  createdAt: z.iso.datetime(),
});

/** Words learned from use (learned-words.json): tool id → word → [evidence, last seen ms], and queries alike. */
const EvidenceSchema = z.record(z.string(), z.tuple([z.number(), z.number()]));
export const LearnedWordsRecordSchema = z.looseObject({
  version: z.literal(1),
  tools: z.record(z.string(), EvidenceSchema),
  queries: z.record(z.string(), EvidenceSchema).optional(),
});

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
  learnedWords: { table: 'learned_words', schema: LearnedWordsRecordSchema, asGiven: true },
  optimization: { table: 'optimization_servers', schema: ServerOptimizationSchema, asGiven: false },
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
export type DiscoveryRecord = z.infer<typeof DiscoveryRecordSchema>;
export type EquippedRecord = z.infer<typeof EquippedRecordSchema>;
export type SessionRecord = z.infer<typeof SessionRecordSchema>;
export type LearnedWordsRecord = z.infer<typeof LearnedWordsRecordSchema>;

/** The row format this loadout writes and the newest it reads; a row with a higher one came from a newer loadout. */
export const ROW_FORMAT = 1;

/** Keys: non-empty, at most 200 characters, so a change notice (8,000 bytes at most) always fits. */
export const StoreKeySchema = z.string().min(1).max(200);

/** Kinds by table name, for change notices (which carry the table). */
export const KIND_OF_TABLE: ReadonlyMap<string, StoreKind> = new Map<string, StoreKind>([
  ...Object.entries(DOCUMENT_KINDS).map(([kind, { table }]) => [table, kind as DocumentKind] as const),
  [OAUTH_KIND.table, 'oauth'],
]);
