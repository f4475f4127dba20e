// The audit trail in Postgres mode, against a real PostgreSQL: `serve --http --store` writes each
// call's record to the audit_records table (no day files), `loadout audit --store` reads them back
// filtered; a killed replica loses at most its last batch; the table expires old rows once a
// UTC day, by one replica's statement; a lost table is reported on stderr and calls go on.
import path from 'node:path';
import postgres from 'postgres';
import { readdir } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStoredAuditTrail } from '../../src/audit/index.js';
import { runCli } from '../helpers/cli.js';
import { eventually, fixture, makeTempDirs, nodeServer, textOf, waitForExit, writeServersYaml, type TempDirs } from '../helpers/gateway.js';
import { connectHttp, startHttpGateway, type ListeningProcess } from '../helpers/http.js';
import { createDatabase, postgresServerUrl } from '../helpers/postgres.js';
import { startPostgresServer } from '../helpers/postgresServer.js';
import { TEST_SECRET_KEY, usePostgresReplicas } from '../helpers/storeBackends.js';

interface Record_ {
  time: string;
  principal: { subject: string; issuer: string } | null;
  action: string;
  server?: string;
  tool?: string;
  outcome: string;
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

  it('reports a lost table on stderr without slowing calls, and says when records are written again', async () => {
    await writeServersYaml(dirs.configDir, SERVERS, { audit: { flush_ms: 20 } });
    const replica = await startReplica('data-a');
    const http = await connectHttp(replica.url, { token: 'tok-alice' });
    const sql = admin();
    try {
      await sql`ALTER TABLE audit_records RENAME TO audit_records_away`;
      // Each call answers while every batch fails: the write is after the answer, off its path.
      for (const text of ['x', 'y']) expect(textOf(await http.client.callTool({ name: 'echo_echo', arguments: { text } }))).toBe(text);
      await eventually(() => replica.output().includes('audit records cannot be written there; calls go on'), 10_000, 'the report');
      expect(replica.output()).toContain('store audit_records');
      await sql`ALTER TABLE audit_records_away RENAME TO audit_records`;
      await http.client.callTool({ name: 'echo_echo', arguments: { text: 'back' } });
      await eventually(() => replica.output().includes('audit records are written there again'), 10_000, 'the recovery');
      // x's batch failed; y's may have gone before or after the table came back (the batch timer
      // runs on): every record is either written or counted as lost, none both, none neither.
      const lost = Number(/lostRecords: (\d+)/.exec(replica.output())?.[1]);
      const written = await auditRecords();
      expect(lost).toBeGreaterThanOrEqual(1);
      expect(lost + written.length).toBe(3);
      expect(written.every((record) => record.outcome === 'ok')).toBe(true);
    } finally {
      await sql.end();
      await http.close();
    }
  });
});

describe('audit and limits while Postgres is stopped', () => {
  it('answers every call, reports the lost audit table and the fallen-back limits once, and uses the store again once it is back', async () => {
    const server = await startPostgresServer();
    const dirs = await makeTempDirs();
    let replica: ListeningProcess | undefined;
    let http: Awaited<ReturnType<typeof connectHttp>> | undefined;
    try {
      const database = await createDatabase(server.url);
      await writeServersYaml(dirs.configDir, SERVERS, { audit: { flush_ms: 20 }, limits: { server_calls_per_minute: 1000 } });
      replica = await startHttpGateway(dirs, ['--store', database.url, '--token', 'tok-alice', '--equip', 'all'], {
        LOADOUT_SECRET_KEY: TEST_SECRET_KEY,
      });
      http = await connectHttp(replica.url, { token: 'tok-alice' });
      expect(textOf(await http.client.callTool({ name: 'echo_echo', arguments: { text: 'before' } }))).toBe('before');
      await server.stop();
      for (let round = 0; round < 4; round++)
        expect(textOf(await http.client.callTool({ name: 'echo_echo', arguments: { text: `away ${round}` } }))).toBe(`away ${round}`);
      const output = replica.output();
      await eventually(() => replica!.output().includes('audit records cannot be written there; calls go on'), 20_000, 'the audit report');
      expect(output.split('rate limits cannot be counted in the store').length - 1).toBe(1);
      await server.start();
      await eventually(
        async () => {
          await http!.client.callTool({ name: 'echo_echo', arguments: { text: 'back' } });
          const now = replica!.output();
          return now.includes('audit records are written there again') && now.includes('rate limits are counted in the store again');
        },
        30_000,
        'the store in use again',
      );
      const records = await runCli(dirs, ['audit', '--json', '--store', database.url], { env: { LOADOUT_SECRET_KEY: TEST_SECRET_KEY } });
      const tools = (JSON.parse(records.stdout) as { records: Record_[] }).records.map((record) => record.tool);
      expect(tools[0]).toBe('echo');
    } finally {
      await http?.close().catch(() => undefined);
      await replica?.close();
      await dirs.cleanup();
      await server.destroy();
    }
  });
});

describe('the store audit table', () => {
  const open = usePostgresReplicas();
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
    await store.audit!.append([row('2026-05-01T10:00:02.000Z'), quoted, row('2026-05-01T10:00:00.000Z')]);
    const all = await store.audit!.read({});
    expect(all.map((json) => (JSON.parse(json) as { time?: string }).time)).toEqual([
      '2026-05-01T10:00:00.000Z',
      undefined,
      '2026-05-01T10:00:02.000Z',
    ]);
    expect(JSON.parse(all[1]!)).toEqual({ detail: 'a "quoted" \\ line, {braces}' });
    expect(await store.audit!.read({ server: 'echo' })).toHaveLength(2);
    expect(await store.audit!.read({ principal: 'id-alice' })).toHaveLength(3);
    expect(await store.audit!.read({ principal: 'bob' })).toHaveLength(0);
    expect(await store.audit!.read({ sinceMs: Date.parse('2026-05-01T10:00:01.000Z') })).toHaveLength(2);
    // A row that is not a record is counted, not fatal.
    const reading = await readStoredAuditTrail(store.audit!);
    expect(reading).toMatchObject({ unreadableLines: 1 });
    expect(reading.records).toHaveLength(2);
  });

  it('keeps a batch written twice once, by its record ids (a retry whose answer was lost), and filters by tool and replica', async () => {
    const store = await open();
    const batch = [row('2026-05-01T10:00:00.000Z'), row('2026-05-01T10:00:01.000Z')];
    await store.audit!.append(batch);
    await store.audit!.append([...batch, row('2026-05-01T10:00:02.000Z')]);
    expect(await store.audit!.read({})).toHaveLength(3);
    expect(await store.audit!.read({ tool: 'echo' })).toHaveLength(3);
    expect(await store.audit!.read({ tool: 'echo_echo' })).toHaveLength(3);
    expect(await store.audit!.read({ tool: 'other' })).toHaveLength(0);
    expect(await store.audit!.read({ replica: 'r' })).toHaveLength(3);
    expect(await store.audit!.read({ replica: 'q' })).toHaveLength(0);
  });

  it('deletes rows past retention once a UTC day, by the first replica to write that day only', async () => {
    const [a, b] = [await open(), await open()];
    const now = Date.now();
    const daysAgo = (days: number) => new Date(now - days * 86_400_000).toISOString();
    await a.audit!.append([row(daysAgo(40)), row(daysAgo(31)), row(daysAgo(10))]);
    await a.audit!.append([row(daysAgo(0))], { retentionDays: 30 });
    expect(await a.audit!.read({})).toHaveLength(2);
    // Rows older still, written later the same day (a replica's clock, a backfill), stay until tomorrow's run.
    await a.audit!.append([row(daysAgo(50))]);
    await b.audit!.append([row(daysAgo(0))], { retentionDays: 30 });
    expect(await b.audit!.read({})).toHaveLength(4);
  });
});
