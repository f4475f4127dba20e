// bench:team rows on scale (teamBench.ts runs them): what one more 2025-era session and one more
// principal cost a store-mode replica (RSS and live heap after a full GC, the delta over N ÷ N),
// and the forwarded-call throughput of 3 replicas on one store against 1 (issue 27: at most 10 %
// lost). The replicas are real `serve --http --store` processes started by the caller.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createHeapSnapshotter, type HeapSnapshotter } from './heapSnapshot.js';
import { rssBytes } from './processes.js';
import { formatBytes } from './stats.js';

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
    // Any request settles the snapshot; a 2026-07-28 client has no ping.
    const liveHeap = () => heap.liveHeapBytes(replica.pid, () => warm.listTools());
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

/** Forwarded calls per second through 1 replica and through 3 on the same store (clients spread evenly), and the loss. */
export async function throughputRows(start: StartReplica): Promise<Row[]> {
  const one = await callsPerSecond(start, 1);
  const three = await callsPerSecond(start, 3);
  const loss = 1 - three / one;
  return [
    [`forwarded calls/s, 1 replica (${CALLERS} callers)`, one.toFixed(0), ''],
    [`forwarded calls/s, 3 replicas on one store (${CALLERS} callers)`, three.toFixed(0), ''],
    [
      '3 replicas vs 1: throughput lost',
      `${(loss * 100).toFixed(1)} %`,
      `target ≤ ${LOSS_TARGET * 100} % (${loss <= LOSS_TARGET ? 'met' : 'missed'}; all replicas share this machine's cores)`,
    ],
  ];
}

// CALLERS clients, caller i on replica i mod `replicas`, each with 'one' equipped (one shared set:
// the anonymous principal's), calling echo_echo until THROUGHPUT_CALLS calls are made in all.
async function callsPerSecond(start: StartReplica, replicas: number): Promise<number> {
  const started = await Promise.all(Array.from({ length: replicas }, (_, index) => start(`throughput-${replicas}-${index}`)));
  const clients: Client[] = [];
  try {
    for (let caller = 0; caller < CALLERS; caller++) clients.push(await connectClient(started[caller % replicas]!.url));
    await clients[0]!.callTool({ name: 'equip-toolset', arguments: { name: 'one' } });
    // Every caller's replica has heard of the set (its notice crossed the store), and every caller's first call is behind it.
    for (const client of clients)
      while ((await client.callTool({ name: 'echo_echo', arguments: { text: 'warm' } })).isError)
        await new Promise((resolve) => setTimeout(resolve, 20));
    let remaining = THROUGHPUT_CALLS;
    let failed = 0;
    const began = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        while (remaining-- > 0) if ((await client.callTool({ name: 'echo_echo', arguments: { text: 'x' } })).isError) failed++;
      }),
    );
    const perSecond = THROUGHPUT_CALLS / ((performance.now() - began) / 1000);
    if (failed) throw new Error(`${failed} of ${THROUGHPUT_CALLS} calls through ${replicas} replicas failed`);
    return perSecond;
  } finally {
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled(started.map((replica) => replica.close()));
  }
}

async function settledRss(pid: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return rssBytes(pid);
}
