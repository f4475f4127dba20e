// The trail in Postgres mode: a record as a row of the store's audit table (written through the
// spool, spooledStoreSink.ts), and the table read back for `loadout audit`, filtered in SQL. The
// files-mode twin is the day files (auditSinks.ts, auditReader.ts).
import type { AuditRow, AuditTable } from '../store/index.js';
import type { AuditRecord } from './auditRecord.js';
import { parseLine, type AuditFilter, type AuditReading } from './auditReader.js';

/** The row of `record`, whose JSON is `json`: the columns the table filters by, and the record. */
export function auditRowOf(record: AuditRecord, json: string): AuditRow {
  return {
    at: record.time,
    principalId: record.principal?.id ?? null,
    principalSubject: record.principal?.subject ?? null,
    server: record.server ?? null,
    recordId: record.id ?? null,
    replica: record.replica ?? null,
    tool: record.tool ?? null,
    exposedTool: record.exposed_tool ?? null,
    json,
  };
}

/** The records of the trail in `table` that `filter` selects, oldest first. */
export async function readStoredAuditTrail(table: AuditTable, filter: AuditFilter = {}): Promise<AuditReading> {
  const records: AuditRecord[] = [];
  let unreadableLines = 0;
  for (const json of await table.read(filter)) {
    const record = parseLine(json);
    if (record) records.push(record);
    else unreadableLines++;
  }
  return { records, unreadableLines };
}
