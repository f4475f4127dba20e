// bench:team rows on scale (teamBench.ts runs them): what one more 2025-era session and one more
// principal cost a store-mode replica (RSS and live heap after a full GC, the delta over N ÷ N),
// and the forwarded-call throughput of 3 replicas on one store against 1 (issue 27: at most 10 %
// lost), with the CPU each process spent per call: 3 replicas run in both runs, each replica in use
// is warmed up alike, so only the spread of the calls differs. The replicas are real
// `serve --http --store` processes started by the caller.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createHeapSnapshotter, freshRequest, type HeapSnapshotter } from './heapSnapshot.js';
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { cpuTimeMs, descendantsOf, rssBytes } from './processes.js';
import { formatBytes, ratio } from './stats.js';

/** A replica as teamBench.ts starts it. */
export interface BenchReplica {
  url: string;
  pid: number;
  close(): Promise<void>;
}

/** Starts a replica on the bench's store, with extra arguments and node flags. */
export type StartReplica = (name: string, extra?: string[], nodeFlags?: string[]) => Promise<BenchReplica>;

/** A row of the table teamBench.ts prints: label, value, target or detail. */
export type Row = [string, string, string];

const MEASURED = 200;
// Calls per replica count: enough for a steady rate, short enough for a bench run.
const THROUGHPUT_CALLS = 3000;
const CALLERS = 24;
// Replicas running in every throughput run, used or not: both runs have the same processes.
const REPLICAS = 3;
// Without it the 3-replica run measured each replica three times less warmed up: 0.9 ms of replica
// CPU per call against 0.5 ms, where 2,000 warm calls each gave 0.3 ms against 0.23 ms.
const WARM_CALLS_PER_REPLICA = 2000;
const SETTLE_MS = 500;
const LOSS_TARGET = 0.1;

/** A 2026-07-28 client (or, `legacy`, a 2025-era one with a session), with a bearer token when given. */
export async function connectClient(url: string, options: { token?: string; legacy?: boolean } = {}): Promise<Client> {
  const client = new Client(
    { name: 'team-bench', version: '1.0.0' },
    options.legacy ? { capabilities: {} } : { capabilities: {}, versionNegotiation: { mode: 'auto' } },
  );
  const headers: Record<string, string> = options.token ? { Authorization: `Bearer ${options.token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** Memory per 2025 session and per principal on one store-mode replica each. */
export async function memoryRows(start: StartReplica): Promise<Row[]> {
  const heap = await createHeapSnapshotter();
  try {
    const perSession = await memoryPer(start, heap, 'sessions', [], (url) => connectClient(url, { legacy: true }));
    const tokens = Array.from({ length: MEASURED }, (_, index) => `principal-${index}`);
    let next = 0;
    const perPrincipal = await memoryPer(
      start,
      heap,
      'principals',
      ['--token', 'warm', ...tokens.flatMap((token) => ['--token', token])],
      (url, warm) => connectClient(url, { token: warm ? 'warm' : tokens[next++]! }),
    );
    return [
      [`store mode: memory per 2025 session (${MEASURED}, tools listed)`, perSession.heap, `RSS ${perSession.rss} per session`],
      [`store mode: memory per principal (${MEASURED} tokens, tools listed)`, perPrincipal.heap, `RSS ${perPrincipal.rss} per principal`],
    ];
  } finally {
    await heap.cleanup();
  }
}

// One replica: a warm client first (it pays for what any first one loads), then MEASURED more,
// each listing its tools; the live heap and RSS grown over them ÷ MEASURED.
async function memoryPer(
  start: StartReplica,
  heap: HeapSnapshotter,
  what: string,
  extra: string[],
  connect: (url: string, warm: boolean) => Promise<Client>,
): Promise<{ heap: string; rss: string }> {
  const replica = await start(`memory-${what}`, extra, heap.nodeFlags);
  const clients: Client[] = [];
  try {
    const warm = await connect(replica.url, true);
    clients.push(warm);
    await warm.listTools();
    // Any request settles the snapshot, on a connection of its own: the snapshot stalls the replica
    // for seconds, past its keep-alive timeout, and a request sent meanwhile on a pooled idle
    // connection is reset when that timeout fires before the request is read.
    const liveHeap = () => heap.liveHeapBytes(replica.pid, () => freshRequest(new URL('/healthz', replica.url)));
    const rssBefore = await settledRss(replica.pid);
    const heapBefore = await liveHeap();
    for (let index = 0; index < MEASURED; index++) {
      const client = await connect(replica.url, false);
      clients.push(client);
      await client.listTools();
    }
    const rssAfter = await settledRss(replica.pid);
    const heapAfter = await liveHeap();
    return {
      heap: `${formatBytes((heapAfter - heapBefore) / MEASURED)} heap`,
      rss: formatBytes((rssAfter - rssBefore) / MEASURED),
    };
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await replica.close();
  }
}

/** Forwarded calls per second through 1 replica and through 3 on the same store (clients spread evenly), the loss, and CPU per call. */
export async function throughputRows(start: StartReplica): Promise<Row[]> {
  const one = await throughput(start, 1);
  const three = await throughput(start, 3);
  const loss = 1 - three.perSecond / one.perSecond;
  // Calls per second of CPU spent by the replicas, their servers and the callers: what the runs
  // would give with the machine to themselves, whatever else ran beside each.
  const perCpuSecond = (run: Throughput) => 1e6 / (run.replicaUs + run.echoUs + run.callersUs);
  const cpuLoss = 1 - perCpuSecond(three) / perCpuSecond(one);
  const verdict = (lost: number) => `target ≤ ${LOSS_TARGET * 100} % (${lost <= LOSS_TARGET ? 'met' : 'missed'})`;
  return [
    [`forwarded calls/s, 1 replica of ${REPLICAS} running (${CALLERS} callers)`, one.perSecond.toFixed(0), cpuDetail(one)],
    [`forwarded calls/s, 3 replicas on one store (${CALLERS} callers)`, three.perSecond.toFixed(0), cpuDetail(three)],
    [
      '3 replicas vs 1: throughput lost',
      `${(loss * 100).toFixed(1)} %`,
      `${verdict(loss)}; CPU per call against the 1-replica run: replicas ${ratio(three.replicaUs, one.replicaUs).toFixed(2)}×, echo servers (the same work) ${ratio(three.echoUs, one.echoUs).toFixed(2)}×`,
    ],
    [
      '3 replicas vs 1: calls per CPU-second lost',
      `${(cpuLoss * 100).toFixed(1)} %`,
      `${verdict(cpuLoss)}; ${perCpuSecond(three).toFixed(0)} against ${perCpuSecond(one).toFixed(0)} calls per second of the runs' CPU`,
    ],
  ];
}

/** One throughput run: the rate, CPU per call (µs) of the replicas, their echo servers and the callers, and the machine's busy share. */
export interface Throughput {
  perSecond: number;
  replicaUs: number;
  /** CPU time of each replica over the run. */
  eachReplicaMs: number[];
  /** The replicas' context switches per call: waits for input (voluntary) and preemptions (involuntary). */
  switchesPerCall: { voluntary: number; involuntary: number };
  echoUs: number;
  callersUs: number;
  machineBusy: number;
  /** The share of the machine's CPU the replicas, their servers and the callers had: the rest went to other work. */
  ownShare: number;
}

function cpuDetail(run: Throughput): string {
  const us = (value: number) => `${value.toFixed(0)} µs`;
  return `CPU per call: replicas ${us(run.replicaUs)}, echo servers ${us(run.echoUs)}, callers ${us(run.callersUs)}; machine ${(run.machineBusy * 100).toFixed(0)} % busy, ${(run.ownShare * 100).toFixed(0)} % of it theirs`;
}

/**
 * `callers` clients, caller i on replica i mod `replicas`, each with 'one' equipped (one shared set:
 * the anonymous principal's), calling echo_echo until `calls` calls are made in all.
 */
export async function throughput(
  start: StartReplica,
  replicas: number,
  { running = REPLICAS, callers = CALLERS, calls = THROUGHPUT_CALLS } = {},
): Promise<Throughput> {
  const started = await Promise.all(Array.from({ length: running }, (_, index) => start(`throughput-${replicas}-${index}`)));
  const clients: Client[] = [];
  try {
    for (let caller = 0; caller < callers; caller++) clients.push(await connectClient(started[caller % replicas]!.url));
    await clients[0]!.callTool({ name: 'equip-toolset', arguments: { name: 'one' } });
    // Every caller's replica has heard of the set (its notice crossed the store), and every caller's first call is behind it.
    for (const client of clients)
      while ((await client.callTool({ name: 'echo_echo', arguments: { text: 'warm' } })).isError)
        await new Promise((resolve) => setTimeout(resolve, 20));
    // Each replica in use forwards as many calls before the measure (its code optimised by V8, its
    // heap grown), not three times fewer in the 3-replica run.
    const warmPerCaller = Math.ceil((WARM_CALLS_PER_REPLICA * replicas) / callers);
    await Promise.all(
      clients.map(async (client) => {
        for (let call = 0; call < warmPerCaller; call++) await client.callTool({ name: 'echo_echo', arguments: { text: 'warm' } });
      }),
    );
    const echoes = (await Promise.all(started.map((replica) => descendantsOf(replica.pid)))).flat();
    const replicaCpu = () => Promise.all(started.map((replica) => cpuTimeMs(replica.pid)));
    const replicaSwitches = () => Promise.all(started.map((replica) => contextSwitches(replica.pid)));
    const switchesBefore = await replicaSwitches();
    const [replicasBefore, echoesBefore, callersBefore, machineBefore] = [
      await replicaCpu(),
      await cpuOf(echoes),
      process.cpuUsage(),
      await machineCpu(),
    ];
    let remaining = calls;
    let failed = 0;
    const began = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        while (remaining-- > 0) if ((await client.callTool({ name: 'echo_echo', arguments: { text: 'x' } })).isError) failed++;
      }),
    );
    const elapsedMs = performance.now() - began;
    const [machineAfter, callersCpu] = [await machineCpu(), process.cpuUsage(callersBefore)];
    const replicasMs = (await replicaCpu()).map((ms, index) => ms - replicasBefore[index]!);
    const echoesMs = (await cpuOf(echoes)) - echoesBefore;
    const switches = (await replicaSwitches()).reduce(
      (total, counts, index) => ({
        voluntary: total.voluntary + counts.voluntary - switchesBefore[index]!.voluntary,
        involuntary: total.involuntary + counts.involuntary - switchesBefore[index]!.involuntary,
      }),
      { voluntary: 0, involuntary: 0 },
    );
    if (failed) throw new Error(`${failed} of ${calls} calls through ${replicas} replicas failed`);
    const perCallUs = (ms: number) => (ms * 1000) / calls;
    const replicasMsTotal = replicasMs.reduce((total, ms) => total + ms, 0);
    return {
      perSecond: calls / (elapsedMs / 1000),
      replicaUs: perCallUs(replicasMsTotal),
      eachReplicaMs: replicasMs,
      switchesPerCall: { voluntary: switches.voluntary / calls, involuntary: switches.involuntary / calls },
      echoUs: perCallUs(echoesMs),
      callersUs: (callersCpu.user + callersCpu.system) / calls,
      machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
      ownShare: (replicasMsTotal + echoesMs + (callersCpu.user + callersCpu.system) / 1000) / (elapsedMs * availableParallelism()),
    };
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled(started.map((replica) => replica.close()));
  }
}

// The process's context switches so far, all its threads' (/proc/PID/status counts the main thread's only).
async function contextSwitches(pid: number): Promise<{ voluntary: number; involuntary: number }> {
  const counts = { voluntary: 0, involuntary: 0 };
  for (const thread of await readdir(`/proc/${pid}/task`)) {
    const status = await readFile(`/proc/${pid}/task/${thread}/status`, 'utf8').catch(() => '');
    counts.voluntary += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    counts.involuntary += Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return counts;
}

async function cpuOf(pids: number[]): Promise<number> {
  return (await Promise.all(pids.map((pid) => cpuTimeMs(pid)))).reduce((total, ms) => total + ms, 0);
}

// The machine's CPU ticks, busy and in all, summed over its cores (the first line of /proc/stat).
async function machineCpu(): Promise<{ busy: number; total: number }> {
  const ticks = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((sum, value) => sum + value, 0);
  // idle and iowait are the 4th and 5th.
  return { busy: total - ticks[3]! - ticks[4]!, total };
}

async function settledRss(pid: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return rssBytes(pid);
}
