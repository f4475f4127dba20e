// The audit trail's table in Postgres mode (audit_records): a batch goes in as one multi-row
// INSERT (arrays unnested, so nine parameters whatever its size; a record id the table holds is
// skipped, so a batch sent twice is kept once), and the first batch of a new
// day also deletes what is past retention in the same statement, by the one replica that moves
// the day in audit_retention. The store keeps records as JSON text; the audit layer owns their shape.
import type { Run } from './recordTables.js';
import type { AuditRow, AuditRowFilter, AuditTable } from './store.js';

// The records go as text[] and are cast row by row: postgres.js would encode a json[] parameter's
// strings as JSON strings once more.
const INSERT = `INSERT INTO audit_records (at, principal_id, principal_subject, server, record_id, replica, tool, exposed_tool, record)
  SELECT at, principal_id, principal_subject, server, record_id, replica, tool, exposed_tool, record::json
  FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
    AS batch(at, principal_id, principal_subject, server, record_id, replica, tool, exposed_tool, record)
  ON CONFLICT (record_id) DO NOTHING`;

// The day moves once per UTC day, for one replica (the row lock makes the others find it moved):
// only that statement deletes. The oldest kept day is today minus (retention - 1), as in files mode.
const INSERT_AND_EXPIRE = `WITH inserted AS (${INSERT}),
  claimed AS (
    UPDATE audit_retention SET last_day = (now() AT TIME ZONE 'UTC')::date
    WHERE last_day < (now() AT TIME ZONE 'UTC')::date RETURNING last_day
  )
  DELETE FROM audit_records
  WHERE at < (((now() AT TIME ZONE 'UTC')::date - ($10::integer - 1)) AT TIME ZONE 'UTC') AND EXISTS (SELECT 1 FROM claimed)`;

const SELECT = `SELECT record::text AS json FROM audit_records
  WHERE ($1::text IS NULL OR principal_id = $1 OR principal_subject = $1)
    AND ($2::text IS NULL OR server = $2)
    AND ($3::timestamptz IS NULL OR at >= $3)
    AND ($4::text IS NULL OR tool = $4 OR exposed_tool = $4)
    AND ($5::text IS NULL OR replica = $5)
  ORDER BY at, id`;

/** The audit table, its statements run by `run`. */
export class PostgresAuditTable implements AuditTable {
  readonly #run: Run;

  constructor(run: Run) {
    this.#run = run;
  }

  async append(rows: readonly AuditRow[], options: { retentionDays?: number } = {}): Promise<void> {
    if (rows.length === 0) return;
    const columns = [
      rows.map((row) => row.at),
      rows.map((row) => row.principalId),
      rows.map((row) => row.principalSubject),
      rows.map((row) => row.server),
      rows.map((row) => row.recordId),
      rows.map((row) => row.replica),
      rows.map((row) => row.tool),
      rows.map((row) => row.exposedTool),
      rows.map((row) => row.json),
    ];
    const retentionDays = options.retentionDays ?? 0;
    await this.#run('save', `write ${rows.length} audit record(s)`, (sql) =>
      retentionDays > 0 ? sql.unsafe(INSERT_AND_EXPIRE, [...columns, retentionDays]) : sql.unsafe(INSERT, columns),
    );
  }

  async read(filter: AuditRowFilter): Promise<string[]> {
    const since = filter.sinceMs === undefined ? null : new Date(filter.sinceMs).toISOString();
    const rows = await this.#run('list', 'read the audit trail', (sql) =>
      sql.unsafe<Array<{ json: string }>>(SELECT, [
        filter.principal ?? null,
        filter.server ?? null,
        since,
        filter.tool ?? null,
        filter.replica ?? null,
      ]),
    );
    return rows.map((row) => row.json);
  }
}
