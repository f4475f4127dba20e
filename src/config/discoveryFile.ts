// The format of `<data dir>/discovery.json`: the last failed discovery of each server (version 2:
// each failure's code beside its text), how a version 1 file is read (upgraded), and the text
// loadout writes. Declared once for the runtime that keeps the records and the store that moves them.
import * as z from 'zod';
import { FailureSchema } from '../shared/index.js';

/** The last failed discovery of one server. */
export const DiscoveryRecordSchema = z.strictObject({
  failedAt: z.iso.datetime(),
  /** Failed attempts in a row. */
  failures: z.number().int().positive(),
  retryAt: z.iso.datetime(),
  /** The failure: its code, and its text as loadout reports it (stderr lines with `${VAR}` values masked). */
  failure: FailureSchema,
  /** Hash of the server's config at the time (see the runtime's configKey). */
  config: z.string(),
});
export type DiscoveryRecord = z.infer<typeof DiscoveryRecordSchema>;

const DiscoveryFileSchema = z.strictObject({ version: z.literal(2), servers: z.record(z.string(), DiscoveryRecordSchema) });

// Version 1 kept only the failure's text. Its code is read from the two texts consumers told apart
// then, as those versions wrote them; the text is kept whole. The next write is version 2.
const V1_NEEDS_AUTHORIZATION = / needs authorization: run loadout auth /;
const V1_TOOLS_LIST_FAILED = / started, but its tools\/list failed /;
const V1RecordSchema = DiscoveryRecordSchema.omit({ failure: true }).extend({ error: z.string() });
const V1DiscoveryFileSchema = z.strictObject({ version: z.literal(1), servers: z.record(z.string(), V1RecordSchema) });

function upgradedV1Record({ error, ...record }: z.infer<typeof V1RecordSchema>): DiscoveryRecord {
  const code = V1_NEEDS_AUTHORIZATION.test(error)
    ? 'NEEDS_AUTHORIZATION'
    : V1_TOOLS_LIST_FAILED.test(error)
      ? 'LIST_FAILED'
      : 'SERVER_START_FAILED';
  return { ...record, failure: { code, text: error } };
}

/**
 * The records of a discovery.json text by server, a version 1 file upgraded. A missing file, or
 * one that cannot be read as records, is none: the worst outcome is one early retry.
 */
export function parseDiscoveryFile(text: string | undefined): Record<string, DiscoveryRecord> {
  if (text === undefined) return {};
  try {
    const json: unknown = JSON.parse(text);
    const parsed = DiscoveryFileSchema.safeParse(json);
    if (parsed.success) return { ...parsed.data.servers };
    const v1 = V1DiscoveryFileSchema.safeParse(json);
    return v1.success
      ? Object.fromEntries(Object.entries(v1.data.servers).map(([server, record]) => [server, upgradedV1Record(record)]))
      : {};
  } catch {
    return {};
  }
}

/** The text of discovery.json holding `servers`, as loadout writes it (version 2). */
export function discoveryFileText(servers: Readonly<Record<string, DiscoveryRecord>>): string {
  return `${JSON.stringify({ version: 2, servers }, null, 2)}\n`;
}
