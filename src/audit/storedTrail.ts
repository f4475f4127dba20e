// The trail in Postgres mode: batches written to the store's audit table (one statement each, the
// day's retention folded into the first batch of each UTC day), and read back for `loadout audit`
// filtered in SQL. The files-mode twin is the day files (auditSinks.ts, auditReader.ts).
import type { AuditRow, AuditTable } from '../store/index.js';
import type { AuditRecord } from './auditRecord.js';
import { parseLine, type AuditFilter, type AuditReading } from './auditReader.js';
import type { AuditSink } from './auditSinks.js';

/** Records written to `table`; rows past `retentionDays` (0 keeps them all) are deleted once a UTC day. */
export function storeSink(table: AuditTable, retentionDays: number): AuditSink {
  let lastDay: string | undefined;
  return {
    name: 'store audit_records',
    async write(batch) {
      const newest = batch.at(-1)?.day;
      const rows = batch.flatMap((day) => day.records).map(({ record, json }) => auditRowOf(record, json));
      // A day this process has not seen yet: the statement also expires old rows, unless another replica has today.
      const expire = retentionDays > 0 && newest !== undefined && newest !== lastDay;
      await table.append(rows, expire ? { retentionDays } : {});
      lastDay = newest;
    },
  };
}

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
