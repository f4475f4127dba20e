// Rate-limit buckets counted in Postgres (limit_buckets), so that the replicas of a fleet enforce
// one limit: each limited call is one statement, limit_take (migration 0003), which refills,
// checks and takes under row locks, with the time from now(): no read-modify-write race.
import type { Run } from './recordTables.js';
import type { LimitBuckets } from './store.js';

const TAKE = 'SELECT limit_take($1::text[], $2::float8[], $3::boolean) AS wait_ms';

/** The store's buckets, their statement run by `run`. */
export class PostgresLimitBuckets implements LimitBuckets {
  readonly #run: Run;

  constructor(run: Run) {
    this.#run = run;
  }

  async take(keys: readonly string[], callsPerMinute: readonly number[], count: boolean): Promise<number[]> {
    const rows = await this.#run('save', 'count a call against its rate limits', (sql) =>
      sql.unsafe<Array<{ wait_ms: number[] }>>(TAKE, [[...keys], [...callsPerMinute], count]),
    );
    return rows[0]!.wait_ms.map(Number);
  }
}
