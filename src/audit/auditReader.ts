// Reading the trail back (`loadout audit`): the day files of the data dir in order, each line
// checked against the record schema, filtered by principal, server and time. A line that does not
// parse (the last one of a file a killed process was writing) is counted, not fatal.
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { AuditRecordSchema, type AuditRecord } from './auditRecord.js';
import { auditDir, dayOfFile } from './auditSinks.js';

/** Which records to read. */
export interface AuditFilter {
  /** A principal's subject or id. */
  readonly principal?: string;
  readonly server?: string;
  /** The tool's own name (`read_text_file`) or the name it was called by (`files_read_text_file`). */
  readonly tool?: string;
  /** The replica that answered. */
  readonly replica?: string;
  /** Only records at or after this time (ms since the epoch). */
  readonly sinceMs?: number;
}

/** What was read. */
export interface AuditReading {
  readonly records: readonly AuditRecord[];
  /** Lines that are not a record (cut short, or not loadout's). */
  readonly unreadableLines: number;
}

/** The records of the trail in `dataDir` that `filter` selects, oldest first. */
export async function readAuditTrail(dataDir: string, filter: AuditFilter = {}): Promise<AuditReading> {
  const dir = auditDir(dataDir);
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  const sinceDay = filter.sinceMs === undefined ? undefined : new Date(filter.sinceMs).toISOString().slice(0, 10);
  const days = names
    .map((name) => ({ name, day: dayOfFile(name) }))
    .filter((file): file is { name: string; day: string } => file.day !== undefined && (sinceDay === undefined || file.day >= sinceDay))
    .sort((a, b) => a.day.localeCompare(b.day));
  const records: AuditRecord[] = [];
  let unreadableLines = 0;
  for (const { name } of days) {
    for (const line of (await readFile(path.join(dir, name), 'utf8')).split('\n')) {
      if (line === '') continue;
      const record = parseLine(line);
      if (!record) unreadableLines++;
      else if (selects(filter, record)) records.push(record);
    }
  }
  return { records, unreadableLines };
}

/** The record `line` (one record's JSON) holds, or undefined when it is not one. */
export function parseLine(line: string): AuditRecord | undefined {
  try {
    const parsed = AuditRecordSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function selects(filter: AuditFilter, record: AuditRecord): boolean {
  if (filter.principal !== undefined && filter.principal !== record.principal?.subject && filter.principal !== record.principal?.id)
    return false;
  if (filter.server !== undefined && filter.server !== record.server) return false;
  if (filter.tool !== undefined && filter.tool !== record.tool && filter.tool !== record.exposed_tool) return false;
  if (filter.replica !== undefined && filter.replica !== record.replica) return false;
  return filter.sinceMs === undefined || Date.parse(record.time) >= filter.sinceMs;
}
