// The audit trail in Postgres mode, against a real PostgreSQL: `serve --http --store` writes each
// call's record to the audit_records table (no day files), `loadout audit --store` reads them back
// filtered; a killed replica loses at most its last batch; the table expires old rows once a
// UTC day, by one replica's statement; a lost table is reported on stderr and calls go on.
import path from 'node:path';
import postgres from 'postgres';
import { readFile, readdir, stat } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditTrail, readStoredAuditTrail, type AuditEvent } from '../../src/audit/index.js';
import { AuditSpool } from '../../src/audit/auditSpool.js';
import { SpooledStoreSink } from '../../src/audit/spooledStoreSink.js';
import { silentLogger } from '../../src/shared/index.js';
import type { AuditTable } from '../../src/store/index.js';
import { useTempDir } from '../helpers/tempDir.js';
import { runCli } from '../helpers/cli.js';
import { eventually, fixture, makeTempDirs, nodeServer, textOf, waitForExit, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { connectHttp, startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { createDatabase, postgresServerUrl } from '../helpers/postgres.js';
import { startPostgresServer, type PostgresServer } from '../helpers/postgresServer.js';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { TEST_SECRET_KEY, usePostgresReplicas } from '../helpers/storeBackends.js';

interface Record_ {
  time: string;
  id?: string;
  exposed_tool?: string;
  request_id?: number;
  principal: { subject: string; issuer: string } | null;
  action: string;
  server?: string;
  tool?: string;
  outcome: string;
}

// The records waiting in the spool of `dataDir`, oldest first.
async function spooled(dataDir: string): Promise<Record_[]> {
  const spool = path.join(dataDir, 'audit-spool');
  const names = (await readdir(spool).catch(() => [])).filter((name) => name.endsWith('.jsonl')).sort();
  const lines = await Promise.all(names.map(async (name) => (await readFile(path.join(spool, name), 'utf8')).split('\n')));
  return lines
    .flat()
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record_);
}

// One figure of the replica's `/metrics` listener (`serving metrics at URL` in its output), 0 when it has no sample.
async function metricValue(output: string, name: string): Promise<number> {
  const url = /serving metrics at (\S+)/.exec(output)?.[1];
  if (!url) throw new Error(`no metrics listener in: ${output}`);
  const response = await fetch(url);
  const found = parsePrometheusTextFormat(await response.text()).find((family) => family.name === name);
  return Number(found?.metrics[0]?.value ?? 0);
}

const SERVERS = { echo: nodeServer(fixture('echo')), other: nodeServer(fixture('echo'), { env: { ECHO_TOOL_PREFIX: 'o_' } }) };

describe('audit trail in the Postgres store', () => {
  let database: Awaited<ReturnType<typeof createDatabase>>;
  let dirs: TempDirs;
  const replicas: ListeningProcess[] = [];
  beforeEach(async () => {
    database = await createDatabase(postgresServerUrl());
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await Promise.allSettled(replicas.splice(0).map((replica) => replica.close()));
    await database.drop();
    await dirs.cleanup();
  });

  const env = (): Record<string, string> => ({ LOADOUT_SECRET_KEY: TEST_SECRET_KEY, LOADOUT_STORE_URL: database.url });
  const startReplica = async (name: string, args: string[] = []): Promise<ListeningProcess> => {
    const replica = await startHttpGateway(
      { configDir: dirs.configDir, dataDir: path.join(dirs.root, name) },
      ['--store', database.url, '--token', 'tok-alice', '--equip', 'all', ...args],
      { LOADOUT_SECRET_KEY: TEST_SECRET_KEY },
    );
    replicas.push(replica);
    return replica;
  };
  const auditRecords = async (args: string[] = []): Promise<Record_[]> => {
    const run = await runCli(dirs, ['audit', '--json', ...args], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { records: Record_[] }).records;
  };
  const admin = () => postgres(database.url, { max: 1, onnotice: () => undefined });

  it('records the calls through two replicas in the table, read back and filtered by loadout audit --store; no day files', async () => {
    await writeServersYaml(dirs.configDir, SERVERS, { audit: { flush_ms: 50 } });
    const [a, b] = [await startReplica('data-a'), await startReplica('data-b')];
    for (const [replica, name, text] of [
      [a, 'echo_echo', 'one'],
      [b, 'echo_echo', 'two'],
      [a, 'other_o_echo', 'three'],
    ] as const) {
      const http = await connectHttp(replica.url, { token: 'tok-alice' });
      expect(textOf(await http.client.callTool({ name, arguments: { text } }))).toBe(text);
      await http.close();
    }
    await eventually(async () => (await auditRecords()).length === 3, 10_000, 'three records in the store');
    const records = await auditRecords();
    expect(records.map(({ server, tool, outcome }) => ({ server, tool, outcome }))).toEqual([
      { server: 'echo', tool: 'echo', outcome: 'ok' },
      { server: 'echo', tool: 'echo', outcome: 'ok' },
      { server: 'other', tool: 'o_echo', outcome: 'ok' },
    ]);
    expect(records[0]?.principal).toMatchObject({ issuer: 'token' });
    expect(await auditRecords(['--server', 'other'])).toHaveLength(1);
    expect(await auditRecords(['--principal', 'nobody'])).toHaveLength(0);
    expect(await auditRecords(['--since', '1h'])).toHaveLength(3);
    expect(await auditRecords(['--since', '2999-01-01'])).toHaveLength(0);
    for (const name of ['data-a', 'data-b']) expect(await readdir(path.join(dirs.root, name))).not.toContain('audit');
    // Without the store the command reads the (empty) day files: the records are only in the table.
    const files = await runCli(dirs, ['audit', '--json'], { env: { LOADOUT_STORE_URL: '' } });
    expect((JSON.parse(files.stdout) as { records: unknown[] }).records).toEqual([]);
  });

  it('loses at most the last batch when a replica is killed', async () => {
    await writeServersYaml(dirs.configDir, SERVERS, { audit: { flush_ms: 50 } });
    const replica = await startReplica('data-a');
    const http = await connectHttp(replica.url, { token: 'tok-alice' });
    for (const text of ['a', 'b', 'c']) await http.client.callTool({ name: 'echo_echo', arguments: { text } });
    await eventually(async () => (await auditRecords()).length === 3, 10_000, 'three records written');
    await http.client.callTool({ name: 'echo_echo', arguments: { text: 'last' } });
    process.kill(replica.pid, 'SIGKILL');
    await waitForExit(replica.pid);
    await http.close().catch(() => undefined);
    const records = await auditRecords();
    expect(records.length === 3 || records.length === 4).toBe(true);
    expect(records.every((record) => record.outcome === 'ok' && record.tool === 'echo')).toBe(true);
  });

  it('keeps the records in the spool while the table is gone, without slowing calls, and writes them all once it is back', async () => {
    await writeServersYaml(dirs.configDir, SERVERS, { audit: { flush_ms: 20 } });
    const replica = await startReplica('data-a');
    const http = await connectHttp(replica.url, { token: 'tok-alice' });
    const sql = admin();
    try {
      await sql`ALTER TABLE audit_records RENAME TO audit_records_away`;
      // Each call answers while every batch fails: the write is after the answer, off its path.
      for (const text of ['x', 'y']) expect(textOf(await http.client.callTool({ name: 'echo_echo', arguments: { text } }))).toBe(text);
      await eventually(
        () => replica.output().includes('the store cannot take audit records; they wait in the spool'),
        10_000,
        'the report',
      );
      expect(replica.output()).toContain('store audit_records');
      await sql`ALTER TABLE audit_records_away RENAME TO audit_records`;
      await http.client.callTool({ name: 'echo_echo', arguments: { text: 'back' } });
      await eventually(() => replica.output().includes('audit records reach the store again'), 10_000, 'the recovery');
      await eventually(async () => (await auditRecords()).length === 3, 10_000, 'every record written');
      expect(await spooled(path.join(dirs.root, 'data-a'))).toEqual([]);
    } finally {
      await sql.end();
      await http.close();
    }
  });
});

describe('the audit spool while Postgres is stopped', () => {
  let server: PostgresServer;
  let dirs: TempDirs;
  const replicas: ListeningProcess[] = [];
  beforeEach(async () => {
    server = await startPostgresServer();
    dirs = await makeTempDirs();
  });
  afterEach(async () => {
    await Promise.allSettled(replicas.splice(0).map((replica) => replica.close()));
    await dirs.cleanup();
    await server.destroy();
  });
  const startReplica = async (databaseUrl: string, extra: string[] = []): Promise<ListeningProcess> => {
    const replica = await startHttpGateway(dirs, ['--store', databaseUrl, '--token', 'tok-alice', '--equip', 'all', ...extra], {
      LOADOUT_SECRET_KEY: TEST_SECRET_KEY,
    });
    replicas.push(replica);
    return replica;
  };
  const storedRecords = async (databaseUrl: string): Promise<Record_[]> => {
    const run = await runCli(dirs, ['audit', '--json', '--store', databaseUrl]);
    expect(run.code, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { records: Record_[] }).records;
  };

  // One call with Postgres up (its record in the store), then `calls` with it stopped, each answered.
  const callThroughOutage = async (databaseUrl: string, http: Awaited<ReturnType<typeof connectHttp>>, calls: number): Promise<void> => {
    expect(textOf(await http.client.callTool({ name: 'echo_echo', arguments: { text: 'before' } }))).toBe('before');
    await eventually(async () => (await storedRecords(databaseUrl)).length === 1, 10_000, 'the first record in the store');
    await server.stop();
    for (let round = 0; round < calls; round++)
      expect(textOf(await http.client.callTool({ name: 'echo_echo', arguments: { text: `away ${round}` } }))).toBe(`away ${round}`);
  };

  it('answers every call, keeps its records in the spool (0600 in a 0700 folder), and writes each once when Postgres is back', async () => {
    const database = await createDatabase(server.url);
    await writeServersYaml(dirs.configDir, SERVERS, { audit: { flush_ms: 20 }, limits: { server_calls_per_minute: 1000 } });
    const replica = await startReplica(database.url);
    const http = await connectHttp(replica.url, { token: 'tok-alice' });
    try {
      await callThroughOutage(database.url, http, 4);
      await eventually(async () => (await spooled(dirs.dataDir)).length >= 4, 20_000, 'the records of the outage in the spool');
      expect(replica.output()).toContain('the store cannot take audit records; they wait in the spool');
      expect(replica.output().split('rate limits cannot be counted in the store').length - 1).toBe(1);
      const spool = path.join(dirs.dataDir, 'audit-spool');
      expect((await stat(spool)).mode & 0o777).toBe(0o700);
      for (const name of await readdir(spool)) expect((await stat(path.join(spool, name))).mode & 0o777, name).toBe(0o600);
      expect((await spooled(dirs.dataDir)).map((record) => record.exposed_tool)).toEqual(Array(4).fill('echo_echo'));

      await server.start();
      await eventually(() => replica.output().includes('audit records reach the store again'), 30_000, 'the spool sent');
      await eventually(async () => (await spooled(dirs.dataDir)).length === 0, 10_000, 'the spool emptied');
      const records = await storedRecords(database.url);
      expect(records).toHaveLength(5);
      expect(new Set(records.map((record) => record.id)).size).toBe(5);
      expect(records.every((record) => record.outcome === 'ok' && record.tool === 'echo')).toBe(true);
    } finally {
      await http.close().catch(() => undefined);
    }
  });

  it('loses none at SIGTERM with the store away: the records still in memory go to the spool, and the next start writes them', async () => {
    const database = await createDatabase(server.url);
    // Records wait in memory for a minute: only the close can write them.
    await writeServersYaml(dirs.configDir, SERVERS, { audit: { flush_ms: 60_000 } });
    const replica = await startReplica(database.url);
    const http = await connectHttp(replica.url, { token: 'tok-alice' });
    await server.stop();
    for (let round = 0; round < 3; round++) await http.client.callTool({ name: 'echo_echo', arguments: { text: `away ${round}` } });
    await http.close().catch(() => undefined);
    expect(await spooled(dirs.dataDir)).toEqual([]);
    await replica.close('SIGTERM');
    expect(await spooled(dirs.dataDir)).toHaveLength(3);

    await server.start();
    const next = await startReplica(database.url);
    await eventually(async () => (await spooled(dirs.dataDir)).length === 0, 20_000, 'the spool sent by the next start');
    expect(next.output()).not.toContain('cannot take audit records');
    const records = await storedRecords(database.url);
    expect(records).toHaveLength(3);
    expect(new Set(records.map((record) => record.id)).size).toBe(3);
  });

  it('counts the records it drops once the spool is full, in /metrics beside the records spooled', async () => {
    const database = await createDatabase(server.url);
    // Room for about two records.
    await writeServersYaml(dirs.configDir, SERVERS, { audit: { flush_ms: 20, spool_max_mb: 0.001 } });
    const replica = await startReplica(database.url, ['--metrics', '--metrics-port', '0']);
    const http = await connectHttp(replica.url, { token: 'tok-alice' });
    try {
      await callThroughOutage(database.url, http, 6);
      await eventually(
        async () => (await metricValue(replica.output(), 'loadout_audit_records_dropped_total')) > 0,
        10_000,
        'records dropped',
      );
      expect(replica.output()).toContain('the audit spool is full');
      const inSpool = (await spooled(dirs.dataDir)).length;
      expect(inSpool).toBeGreaterThanOrEqual(1);
      await eventually(
        async () =>
          (await metricValue(replica.output(), 'loadout_audit_records_dropped_total')) + inSpool === 6 &&
          (await metricValue(replica.output(), 'loadout_audit_records_spooled')) === inSpool,
        10_000,
        'every record spooled or counted as dropped',
      );
    } finally {
      await http.close().catch(() => undefined);
    }
  });
});

describe('the store audit table', () => {
  const open = usePostgresReplicas();
  const spoolRoot = useTempDir('loadout-audit-spool-');
  const event = (requestId: number): AuditEvent => ({
    startedAt: Date.parse('2026-05-01T10:00:00Z') + requestId,
    principal: undefined,
    action: 'tool-call',
    method: 'tools/call',
    server: 'echo',
    tool: 'echo',
    exposedTool: 'echo_echo',
    hasArguments: true,
    arguments: {},
    outcome: 'ok',
    durationMs: 1,
    requestId,
  });
  let rows = 0;
  const row = (at: string, server: string | null = 'echo') => ({
    at,
    principalId: 'id-alice',
    principalSubject: 'alice',
    server,
    recordId: `r.${++rows}`,
    replica: 'r',
    tool: 'echo',
    exposedTool: 'echo_echo',
    json: JSON.stringify({ time: at, principal: null, action: 'tool-call', method: 'tools/call', outcome: 'ok', duration_ms: 1 }),
  });

  it('writes a batch in one statement, nulls and quotes intact, and reads it back filtered, oldest first', async () => {
    const store = await open();
    const quoted = { ...row('2026-05-01T10:00:01.000Z', null), json: JSON.stringify({ detail: 'a "quoted" \\ line, {braces}' }) };
    await store.fleet!.audit.append([row('2026-05-01T10:00:02.000Z'), quoted, row('2026-05-01T10:00:00.000Z')]);
    const all = await store.fleet!.audit.read({});
    expect(all.map((json) => (JSON.parse(json) as { time?: string }).time)).toEqual([
      '2026-05-01T10:00:00.000Z',
      undefined,
      '2026-05-01T10:00:02.000Z',
    ]);
    expect(JSON.parse(all[1]!)).toEqual({ detail: 'a "quoted" \\ line, {braces}' });
    expect(await store.fleet!.audit.read({ server: 'echo' })).toHaveLength(2);
    expect(await store.fleet!.audit.read({ principal: 'id-alice' })).toHaveLength(3);
    expect(await store.fleet!.audit.read({ principal: 'bob' })).toHaveLength(0);
    expect(await store.fleet!.audit.read({ sinceMs: Date.parse('2026-05-01T10:00:01.000Z') })).toHaveLength(2);
    // A row that is not a record is counted, not fatal.
    const reading = await readStoredAuditTrail(store.fleet!.audit);
    expect(reading).toMatchObject({ unreadableLines: 1 });
    expect(reading.records).toHaveLength(2);
  });

  it('keeps a batch written twice once, by its record ids (a retry whose answer was lost), and filters by tool and replica', async () => {
    const store = await open();
    const batch = [row('2026-05-01T10:00:00.000Z'), row('2026-05-01T10:00:01.000Z')];
    await store.fleet!.audit.append(batch);
    await store.fleet!.audit.append([...batch, row('2026-05-01T10:00:02.000Z')]);
    expect(await store.fleet!.audit.read({})).toHaveLength(3);
    expect(await store.fleet!.audit.read({ tool: 'echo' })).toHaveLength(3);
    expect(await store.fleet!.audit.read({ tool: 'echo_echo' })).toHaveLength(3);
    expect(await store.fleet!.audit.read({ tool: 'other' })).toHaveLength(0);
    expect(await store.fleet!.audit.read({ replica: 'r' })).toHaveLength(3);
    expect(await store.fleet!.audit.read({ replica: 'q' })).toHaveLength(0);
  });

  it('sends a spooled batch whose commit was answered by a lost connection again, and keeps it once', async () => {
    const store = await open();
    const table = store.fleet!.audit;
    let answers = 0;
    // The first batch is committed, then its answer is lost (as with a connection dropped just after the commit).
    const lossy: AuditTable = {
      append: async (rows, options) => {
        await table.append(rows, options);
        if (++answers === 1) throw new Error('connection lost after the commit');
      },
      read: (filter) => table.read(filter),
    };
    const sink = new SpooledStoreSink(lossy, new AuditSpool(path.join(spoolRoot(), 'spool'), 1 << 20, 'r'), 0, silentLogger);
    const trail = new AuditTrail({ sinks: [sink], withArguments: false, flushMs: 10, logger: silentLogger, replica: 'r' });
    for (const requestId of [1, 2, 3]) trail.record(event(requestId));
    await trail.flush();
    await eventually(() => answers >= 2, 10_000, 'the batch sent again');
    trail.record(event(4));
    await trail.close();
    expect((await table.read({})).map((json) => (JSON.parse(json) as { id: string }).id)).toEqual(['r.1', 'r.2', 'r.3', 'r.4']);
    expect(await readdir(path.join(spoolRoot(), 'spool'))).toEqual([]);
  });

  it('deletes rows past retention once a UTC day, by the first replica to write that day only', async () => {
    const [a, b] = [await open(), await open()];
    const now = Date.now();
    const daysAgo = (days: number) => new Date(now - days * 86_400_000).toISOString();
    await a.fleet!.audit.append([row(daysAgo(40)), row(daysAgo(31)), row(daysAgo(10))]);
    await a.fleet!.audit.append([row(daysAgo(0))], { retentionDays: 30 });
    expect(await a.fleet!.audit.read({})).toHaveLength(2);
    // Rows older still, written later the same day (a replica's clock, a backfill), stay until tomorrow's run.
    await a.fleet!.audit.append([row(daysAgo(50))]);
    await b.fleet!.audit.append([row(daysAgo(0))], { retentionDays: 30 });
    expect(await b.fleet!.audit.read({})).toHaveLength(4);
  });
});
