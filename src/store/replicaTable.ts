// The replicas' heartbeats in Postgres mode (replica_heartbeats, migration 0004): one upsert per
// beat, stamped with the database's now(), and the rows heard from within a window, for status.
// A fleet feature: the files backend has no replicas to list.
import { HeardReplicaSchema, ReplicaHeartbeatSchema, type HeardReplica, type ReplicaHeartbeat } from './records.js';
import type { Run } from './recordTables.js';
import type { ReplicaTable } from './store.js';

const BEAT = `INSERT INTO replica_heartbeats AS r (id, host, pid, version, started_at, last_heard, sessions, listening)
  VALUES ($1, $2, $3, $4, $5::timestamptz, now(), $6, $7)
  ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, version = excluded.version,
    started_at = excluded.started_at, last_heard = now(), sessions = excluded.sessions, listening = excluded.listening`;

// Rows silent past the window are also deleted, by whichever replica or command reads: a replica
// that died without its last delete does not pile up.
const HEARD = `WITH gone AS (DELETE FROM replica_heartbeats WHERE last_heard < now() - $1 * interval '1 millisecond')
  SELECT id, host, pid, version, started_at, last_heard, sessions, listening FROM replica_heartbeats
  WHERE last_heard >= now() - $1 * interval '1 millisecond' ORDER BY started_at, id`;

interface HeartbeatRow {
  id: string;
  host: string;
  pid: number;
  version: string;
  started_at: Date;
  last_heard: Date;
  sessions: number;
  listening: boolean;
}

/** The heartbeats table, its statements run by `run`. */
export class PostgresReplicaTable implements ReplicaTable {
  readonly #run: Run;

  constructor(run: Run) {
    this.#run = run;
  }

  async beat(heartbeat: ReplicaHeartbeat): Promise<void> {
    const { id, host, pid, version, started, sessions, listening } = ReplicaHeartbeatSchema.parse(heartbeat);
    await this.#run('save', `write replica ${id}'s heartbeat`, (sql) =>
      sql.unsafe(BEAT, [id, host, pid, version, started, sessions, listening]),
    );
  }

  async heard(withinMs: number): Promise<HeardReplica[]> {
    const rows = await this.#run('list', 'read the replicas', (sql) => sql.unsafe<HeartbeatRow[]>(HEARD, [withinMs]));
    return rows.map((row) =>
      HeardReplicaSchema.parse({
        id: row.id,
        host: row.host,
        pid: row.pid,
        version: row.version,
        started: row.started_at.toISOString(),
        lastHeard: row.last_heard.toISOString(),
        sessions: row.sessions,
        listening: row.listening,
      }),
    );
  }

  async forget(id: string): Promise<void> {
    await this.#run('delete', `remove replica ${id}'s heartbeat`, (sql) => sql`DELETE FROM replica_heartbeats WHERE id = ${id}`);
  }
}
