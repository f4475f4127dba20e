// Row 7: resident memory of the gateway with 50 configured lazy servers (2,500 cached tools),
// idle (next to a trivial server's, the floor of a Node MCP process) and after two rounds of
// forwarded calls. The 80 MiB target applies to idle. A leak is judged on the live JS heap after a
// full GC (heap snapshot) after each round, not on RSS: RSS floats by tens of MiB between readings
// with V8's heap sizing and GC timing (−13 to +45 MiB across runs of the same build), which hides
// or fakes a per-call leak. The first round also pays for JIT code and the echo server's connection.
// Row 7c: what one more 2025-era HTTP session holds (live heap after a full GC, per session), the
// figure behind the default `--max-sessions`.
import { createSetup, ECHO_FIXTURE } from './catalogFixture.js';
import { createHeapSnapshotter, freshRequest } from './heapSnapshot.js';
import { connectHttpSession, spawnHttpLoadout } from './httpProcess.js';
import { descendantsOf, rssBytes, spawnLoadout, spawnMcp } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatBytes } from './stats.js';

const RSS_TARGET_BYTES = 80 * 1024 * 1024;
const CONCURRENT_CALLERS = 8;
const SETTLE_MS = 500;
// Allowed live-heap growth between the two rounds: a collected heap moves by ~0.2 MiB (compiled
// code), so 1 MiB shows a leak of ~100 bytes per call at 10,000 calls.
const GROWTH_TOLERANCE_BYTES = 1024 * 1024;

// Sessions opened for row 7c, after one that pays for what any first session loads.
const MEASURED_SESSIONS = 200;

/** Rows 7a–7c. */
export async function benchMemory(context: BenchContext): Promise<BenchRow[]> {
  return [...(await gatewayRows(context)), await sessionRow()];
}

async function gatewayRows(context: BenchContext): Promise<BenchRow[]> {
  const trivialIdle = await trivialServerIdleRss();
  const setup = await createSetup({ servers: 49, toolsPerServer: 50, echoTools: context.echoTools, toolsets: { echo: ['echo.echo'] } });
  const heap = await createHeapSnapshotter();
  const gateway = await spawnLoadout(setup.args, [], { nodeFlags: heap.nodeFlags });
  const liveHeap = () => heap.liveHeapBytes(gateway.pid, () => gateway.client.ping());
  try {
    await gateway.client.listTools();
    // Idle: configured and connected, nothing equipped yet, as a session starts.
    const idle = await settledRss(gateway.pid);
    const equipped = await gateway.client.callTool({ name: 'equip-toolset', arguments: { name: 'echo' } });
    if (equipped.isError) throw new Error(`equip failed: ${JSON.stringify(equipped.content)}`);
    const calls = context.scale.memoryCalls;
    const perCaller = Math.ceil(calls / CONCURRENT_CALLERS);
    const round = () =>
      Promise.all(
        Array.from({ length: CONCURRENT_CALLERS }, async () => {
          for (let call = 0; call < perCaller; call++)
            await gateway.client.callTool({ name: 'echo_echo', arguments: { text: `call ${call}` } });
        }),
      );
    await round();
    const afterFirst = await settledRss(gateway.pid);
    // After RSS: writing a snapshot leaves the process's RSS inflated.
    const heapAfterFirst = await liveHeap();
    const [echoPid] = await descendantsOf(gateway.pid);
    const echoServer = echoPid === undefined ? Number.NaN : await rssBytes(echoPid);
    await round();
    const heapAfterSecond = await liveHeap();
    const growth = heapAfterSecond - heapAfterFirst;
    const total = perCaller * CONCURRENT_CALLERS;
    return [
      {
        id: '7a',
        figure: 'gateway RSS idle, 50 lazy servers configured',
        loadout: formatBytes(idle),
        limit: `trivial server idle ${formatBytes(trivialIdle)}`,
        ratio: idle / trivialIdle,
        target: '≤ 80 MiB',
        pass: idle <= RSS_TARGET_BYTES,
        values: { idleRssBytes: idle, trivialServerIdleRssBytes: trivialIdle },
      },
      {
        id: '7b',
        figure: `RSS after ${total} calls; live heap growth over ${total} more`,
        loadout: `${formatBytes(afterFirst)}; heap ${growth >= 0 ? '+' : '−'}${formatBytes(Math.abs(growth))}`,
        limit: `echo server after the same calls ${formatBytes(echoServer)}`,
        ratio: afterFirst / echoServer,
        target: `growth ≤ ${formatBytes(GROWTH_TOLERANCE_BYTES)}`,
        pass: growth <= GROWTH_TOLERANCE_BYTES,
        values: {
          callsPerRound: total,
          afterFirstRoundRssBytes: afterFirst,
          afterFirstRoundLiveHeapBytes: heapAfterFirst,
          afterSecondRoundLiveHeapBytes: heapAfterSecond,
          growthBytes: growth,
          echoServerRssBytes: echoServer,
        },
      },
    ];
  } finally {
    await gateway.close();
    await setup.cleanup();
    await heap.cleanup();
  }
}

// Row 7c: live heap of `serve --http` with one session, then with MEASURED_SESSIONS more, each
// initialized and its tools listed once, as a client does on connecting.
async function sessionRow(): Promise<BenchRow> {
  const setup = await createSetup({ servers: 5, toolsPerServer: 20 });
  const heap = await createHeapSnapshotter();
  const gateway = await spawnHttpLoadout(setup.args, ['--max-sessions', String(MEASURED_SESSIONS + 1)], 1, heap.nodeFlags);
  const opened: Array<Awaited<ReturnType<typeof connectHttpSession>>> = [];
  // Settled on a connection of its own (see freshRequest), never the sessions' pooled ones.
  const liveHeap = () => heap.liveHeapBytes(gateway.pid, () => freshRequest(new URL('/healthz', gateway.url)));
  try {
    await gateway.clients[0]!.listTools();
    const before = await liveHeap();
    for (let session = 0; session < MEASURED_SESSIONS; session++) {
      const connected = await connectHttpSession(gateway.url, `loadout-bench-session-${session}`);
      opened.push(connected);
      await connected.client.listTools();
    }
    const after = await liveHeap();
    const perSession = (after - before) / MEASURED_SESSIONS;
    return {
      id: '7c',
      figure: `live heap per 2025-era HTTP session (${MEASURED_SESSIONS} sessions, initialized, tools listed)`,
      loadout: formatBytes(perSession),
      limit: `live heap with one session ${formatBytes(before)}`,
      target: '—',
      values: { sessions: MEASURED_SESSIONS, perSessionBytes: perSession, liveHeapBeforeBytes: before, liveHeapAfterBytes: after },
    };
  } finally {
    await Promise.allSettled(opened.map(({ transport }) => transport.terminateSession()));
    await Promise.allSettled(opened.map(({ client }) => client.close()));
    await gateway.close();
    await setup.cleanup();
    await heap.cleanup();
  }
}

// The floor: a Node process running the SDK's server and nothing else.
async function trivialServerIdleRss(): Promise<number> {
  const server = await spawnMcp(process.execPath, [ECHO_FIXTURE]);
  try {
    await server.client.listTools();
    return await settledRss(server.pid);
  } finally {
    await server.close();
  }
}

async function settledRss(pid: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return rssBytes(pid);
}
