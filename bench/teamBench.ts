// `npm run bench:team`: what store mode costs, on a PostgreSQL the operator names
// (LOADOUT_BENCH_POSTGRES_URL: a superuser URL on loopback; the bench creates and drops a database
// of its own there). Replicas are real `loadout serve --http --store` processes with a data dir
// each; clients are SDK 2026-07-28 Clients. It prints, as ratios against the targets of issue 27:
//   - propagation: equip through replica A → tools list_changed on a listen stream on replica B;
//   - store ÷ files for an equip, a first request and a discovery, each on one replica;
//   - database transactions per forwarded call of an equipped tool (target 0), from
//     pg_stat_database: a replica's run with 500 calls less one with none;
//   - memory per 2025 session and per principal, and 3 replicas against 1 (teamScale.ts).
import type { Client } from '@modelcontextprotocol/client';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { CLI, ECHO_FIXTURE } from './catalogFixture.js';
import { formatMs, ratio, summarize } from './stats.js';
import { connectClient, memoryRows, throughputRows } from './teamScale.js';

const PROPAGATION_ROUNDS = 200;
const FORWARDED_CALLS = 500;
const OVERHEAD_ROUNDS = 30;
const STATS_SETTLE_MS = 1000;
const SECRET_KEY = 'bench-secret-key-0123456789abcdefghijklmnop';
const AUDIT_TABLE = 'audit_records';

interface Replica {
  url: string;
  pid: number;
  close(): Promise<void>;
}

const serverUrl = process.env.LOADOUT_BENCH_POSTGRES_URL;
if (!serverUrl) {
  console.error(
    'bench:team needs LOADOUT_BENCH_POSTGRES_URL=postgres://USER:PASSWORD@127.0.0.1:PORT/postgres (a server it may create a database on)',
  );
  process.exit(1);
}

const root = await mkdtemp(path.join(tmpdir(), 'loadout-team-bench-'));
const configDir = path.join(root, 'config');
// Each read of the statistics sees them as they are then, not as the first read of a transaction did.
const STATS_OPTIONS = { max: 1, onnotice: () => undefined, connection: { stats_fetch_consistency: 'none' } };
const admin = postgres(serverUrl, STATS_OPTIONS);
const databaseName = `loadout_bench_${randomBytes(4).toString('hex')}`;
const urlOf = (database: string) => {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
};
const storeUrl = urlOf(databaseName);
// The store ÷ files runs start from an empty store, as the files run starts from an empty data dir.
const overheadDatabase = `${databaseName}_overhead`;
const opened: Array<{ close(): Promise<unknown> }> = [];

try {
  await mkdir(configDir);
  await writeFile(
    path.join(configDir, 'servers.yaml'),
    `servers:\n  echo:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(ECHO_FIXTURE)}]\n`,
  );
  await admin.unsafe(`CREATE DATABASE ${databaseName}`);
  await admin.unsafe(`CREATE DATABASE ${overheadDatabase}`);

  const rows: Array<[string, string, string]> = [];

  // Propagation, A → B, and round trips per forwarded call.
  const [a, b] = await Promise.all([startReplica('a', storeUrl), startReplica('b', storeUrl)]);
  opened.push(a, b);
  const onA = await connect(a.url);
  const onB = await connect(b.url);
  opened.push(onA, onB);
  await onA.callTool({ name: 'build-toolset', arguments: { name: 'one', tools: ['echo.echo'] } });
  await onA.callTool({ name: 'build-toolset', arguments: { name: 'two', tools: ['echo.echo', 'echo.add'] } });
  let heard: (() => void) | undefined;
  onB.setNotificationHandler('notifications/tools/list_changed', () => heard?.());
  await onB.listen({ toolsListChanged: true });
  const propagation: number[] = [];
  for (let round = 0; round < PROPAGATION_ROUNDS; round++) {
    const arrived = new Promise<void>((resolve) => (heard = resolve));
    const started = performance.now();
    await onA.callTool({ name: 'equip-toolset', arguments: { name: round % 2 ? 'one' : 'two' } });
    await arrived;
    propagation.push(performance.now() - started);
  }
  const spread = summarize(propagation);
  rows.push(['propagation p50 (equip on A → list_changed on B)', formatMs(spread.p50), '']);
  rows.push(['propagation p99', formatMs(spread.p99), `${ratio(spread.p99, 250).toFixed(2)} of 250 ms`]);

  // A replica's transactions and table accesses, all of them, are counted once it has exited
  // (PostgreSQL 15 publishes a busy backend's counters only at times, an idle one's at its exit): a
  // run with FORWARDED_CALLS and one with none that idles as long as the calls took (the change bus's
  // heartbeat and other timers run alike), the same otherwise; the difference is the calls'.
  // Nothing else may talk to the database meanwhile: A and B stop first.
  for (const item of [onA, onB, a, b]) await item.close();
  opened.length = 0;
  await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
  const busy = await databaseUseOfRun(FORWARDED_CALLS);
  const quiet = await databaseUseOfRun(0, busy.callsMs);
  const perCall = (busyCount: number, quietCount: number) => (Math.max(0, busyCount - quietCount) / FORWARDED_CALLS).toFixed(3);
  rows.push([
    `DB reads and row writes per forwarded call, audit trail aside`,
    perCall(busy.accesses, quiet.accesses),
    `target 0 (a run: ${busy.accesses} with the calls, ${quiet.accesses} without)`,
  ]);
  // A 2025-era session is a record in the store too: its calls of an equipped tool read none.
  const legacyBusy = await databaseUseOfRun(FORWARDED_CALLS, 0, true);
  const legacyQuiet = await databaseUseOfRun(0, legacyBusy.callsMs, true);
  rows.push([
    `… the same through a 2025 session`,
    perCall(legacyBusy.accesses, legacyQuiet.accesses),
    `target 0 (a run: ${legacyBusy.accesses} with the calls, ${legacyQuiet.accesses} without; a session's start may record its equip once more)`,
  ]);
  rows.push([
    `DB transactions per forwarded call (${FORWARDED_CALLS} calls)`,
    perCall(busy.transactions, quiet.transactions),
    `${busy.transactions} with the calls, ${quiet.transactions} without: the audit trail's batches (${busy.auditRows - quiet.auditRows} records), written every audit.flush_ms off the calls' path`,
  ]);

  const overhead: Partial<Record<'files' | 'store', Record<'discover' | 'equip' | 'first', number>>> = {};
  // Store ÷ files on one replica each: an equip, a principal's first request (a new token), a discovery.
  for (const mode of ['files', 'store'] as const) {
    const replica = await startReplica(`${mode}-overhead`, mode === 'store' ? urlOf(overheadDatabase) : undefined, [
      '--token',
      'first',
      ...tokens(),
    ]);
    opened.push(replica);
    const client = await connect(replica.url, 'first');
    opened.push(client);
    const discoverMs = await time(() => client.callTool({ name: 'discover-all-tools', arguments: { query: 'echo' } }));
    await client.callTool({ name: 'build-toolset', arguments: { name: 'one', tools: ['echo.echo'] } });
    await client.callTool({ name: 'build-toolset', arguments: { name: 'two', tools: ['echo.echo', 'echo.add'] } });
    const equips: number[] = [];
    for (let round = 0; round < OVERHEAD_ROUNDS; round++)
      equips.push(await time(() => client.callTool({ name: 'equip-toolset', arguments: { name: round % 2 ? 'one' : 'two' } })));
    const firsts: number[] = [];
    for (let round = 0; round < OVERHEAD_ROUNDS; round++) {
      const other = await connect(replica.url, `token-${round}`);
      firsts.push(await time(() => other.listTools()));
      await other.close();
    }
    overhead[mode] = { discover: discoverMs, equip: summarize(equips).p50, first: summarize(firsts).p50 };
  }
  for (const [what, label] of [
    ['discover', 'first discovery of echo'],
    ['equip', 'equip p50'],
    ['first', "a principal's first tools/list p50"],
  ] as const) {
    const files = overhead.files![what];
    const store = overhead.store![what];
    rows.push([`store ÷ files: ${label}`, ratio(store, files).toFixed(2), `${formatMs(store)} ÷ ${formatMs(files)}`]);
  }
  for (const item of opened.splice(0).reverse()) await item.close();
  // Memory and throughput on the store the propagation rows used ('one' is saved there).
  const onStore = (name: string, extra: string[] = [], nodeFlags: string[] = []) => startReplica(name, storeUrl, extra, nodeFlags);
  rows.push(...(await memoryRows(onStore)), ...(await throughputRows(onStore)));
  for (const [label, value, target] of rows) console.log(`${label.padEnd(62)} ${value.padStart(10)}  ${target}`);
} finally {
  for (const item of opened.reverse()) await item.close().catch(() => undefined);
  for (const database of [databaseName, overheadDatabase])
    await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  await rm(root, { recursive: true, force: true });
}

function tokens(): string[] {
  return Array.from({ length: OVERHEAD_ROUNDS }, (_, round) => ['--token', `token-${round}`]).flat();
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

function connect(url: string, token?: string): Promise<Client> {
  return connectClient(url, token ? { token } : {});
}

interface DatabaseUse {
  transactions: number;
  /** Table scans and rows written, on every table but the audit trail's. */
  accesses: number;
  auditRows: number;
  /** How long the calls took. */
  callsMs: number;
}

// The bench database's use over one replica's life: start, connect (a 2025-era session when
// `legacy`), equip 'one', `calls` forwarded calls (or, with none, `idleMs` of waiting), stop.
async function databaseUseOfRun(calls: number, idleMs = 0, legacy = false): Promise<DatabaseUse> {
  const before = await databaseUse();
  const replica = await startReplica(`round-trips-${calls}${legacy ? '-2025' : ''}`, storeUrl);
  const client = await connectClient(replica.url, { legacy });
  await client.callTool({ name: 'equip-toolset', arguments: { name: 'one' } });
  const began = performance.now();
  for (let call = 0; call < calls; call++) await client.callTool({ name: 'echo_echo', arguments: { text: 'x' } });
  if (idleMs) await new Promise((resolve) => setTimeout(resolve, idleMs));
  const callsMs = performance.now() - began;
  await client.close();
  await replica.close();
  // A backend publishes its counters as it exits, just after the replica has.
  await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
  const after = await databaseUse();
  return {
    transactions: after.transactions - before.transactions,
    accesses: after.accesses - before.accesses,
    auditRows: after.auditRows - before.auditRows,
    callsMs,
  };
}

// Table statistics are per database: read on a connection to the bench database of its own, closed
// and settled before the transactions are read, so its one transaction falls in every run alike.
async function databaseUse(): Promise<Omit<DatabaseUse, 'callsMs'>> {
  const reader = postgres(storeUrl, STATS_OPTIONS);
  const tables = await reader<Array<{ name: string; accesses: string; inserted: string }>>`
    SELECT relname AS name, seq_scan + coalesce(idx_scan, 0) + n_tup_ins + n_tup_upd + n_tup_del AS accesses, n_tup_ins AS inserted
    FROM pg_stat_user_tables`;
  await reader.end();
  await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
  const [database] = await admin<
    Array<{ n: string }>
  >`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = ${databaseName}`;
  return {
    transactions: Number(database!.n),
    accesses: tables.reduce((total, table) => total + (table.name === AUDIT_TABLE ? 0 : Number(table.accesses)), 0),
    auditRows: Number(tables.find((table) => table.name === AUDIT_TABLE)?.inserted ?? 0),
  };
}

function startReplica(name: string, store: string | undefined, extra: string[] = [], nodeFlags: string[] = []): Promise<Replica> {
  const dataDir = path.join(root, `data-${name}`);
  // LOADOUT_BENCH_CPU_PROF=<dir>: each replica writes a V8 CPU profile there as it exits, named after it.
  const profileDir = process.env.LOADOUT_BENCH_CPU_PROF;
  const profileFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
  const args = [
    ...nodeFlags,
    ...profileFlags,
    CLI,
    '--config',
    configDir,
    '--data',
    dataDir,
    ...(store ? ['--store', store] : []),
    'serve',
    '--http',
    '--port',
    '0',
    ...extra,
  ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, LOADOUT_SECRET_KEY: SECRET_KEY },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving MCP at (\S+)/.exec(output);
      if (match)
        resolve({
          url: match[1]!,
          pid: child.pid!,
          close: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
    });
    child.once('exit', (code) => reject(new Error(`replica ${name} exited with ${code}: ${output}`)));
  });
}
