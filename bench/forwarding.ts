// Row 1: what loadout adds to a forwarded call. The same echo fixture is called directly, through
// a zero-logic relay process (the physical floor of one extra hop), through a JSON-lines relay
// (the floor of a hop that reads every message) and through `loadout serve`, in interleaved
// batches so machine noise hits all alike; then calls/s of 8 concurrent callers through loadout
// over stdio (next to the bare relay and direct under the same callers) and over streamable HTTP
// (next to direct HTTP). The CPU time each middle process spends per call is read from /proc
// beside the wall times: on a busy machine it moves far less than latency does. The stdio rows are
// measured twice in the same run, once per era of MCP: a 2025 client against the echo fixture
// (1a–1f), and a client negotiating 2026-07-28 against an echo server served by serveStdio
// (1a′–1f′), whose era through loadout downstream is asked of that server and named in the row.
import type { Client } from '@modelcontextprotocol/client';
import { createSetup, ECHO_FIXTURE, JSON_RELAY, MODERN_ECHO, RELAY, type BenchSetup } from './catalogFixture.js';
import { spawnHttpFixture, spawnHttpLoadout } from './httpProcess.js';
import { cpuTimeMs, spawnLoadout, spawnMcp, type ClientEra, type McpProcess } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatMs, ratio, summarize, timeMs, type Summary } from './stats.js';

const CONCURRENT_CALLERS = 8;

/** One way of calling the echo tool, timed as a whole path. */
interface CallPath {
  name: string;
  /** Connected clients; caller i of the concurrent callers uses `clients[i % clients.length]`. */
  clients: Client[];
  /** The echo tool's name on this path (`echo` directly, the flattened name through loadout). */
  tool: string;
  /** The process between the caller and the echo server, whose CPU time is read (stdio paths). */
  middle?: number;
}

/** Clients of one spawned server, and how to end them and it. */
interface Connected {
  clients: Client[];
  /** The spawned process's id, when it is one process on stdio. */
  pid?: number;
  close(): Promise<void>;
}

/**
 * Loadout over streamable HTTP for the throughput figure, one MCP session per caller as a
 * multi-client deployment has, and the same echo tool reached directly over HTTP (its own limit).
 */
const HTTP_PATHS = {
  gateway: (setup: BenchSetup) => spawnHttpLoadout(setup.args, ['--equip', 'echo'], CONCURRENT_CALLERS),
  direct: () => spawnHttpFixture(CONCURRENT_CALLERS),
};

/** The stdio paths one era's rows compare: its direct server, the two relays in front of it, and loadout. */
interface EraPaths {
  direct: CallPath;
  relay: CallPath;
  jsonRelay: CallPath;
  loadout: CallPath;
}

/** How each era's rows are told apart: the id's mark and the words in the figure. */
const ERA_LABELS: Record<ClientEra, { mark: string; words: string }> = {
  legacy: { mark: '', words: 'stdio' },
  modern: { mark: '′', words: 'stdio, 2026-07-28 client' },
};

/** Rows 1a–1f for a 2025 client; 1a′–1f′, 1h and 1i for a 2026-07-28 client. */
export async function benchForwarding(context: BenchContext): Promise<BenchRow[]> {
  const modernTools = await listToolsOf(MODERN_ECHO);
  const setup = await createSetup({
    servers: 0,
    toolsPerServer: 0,
    echoTools: context.echoTools,
    cached: { modern: { args: [MODERN_ECHO], tools: modernTools }, strict: { args: [MODERN_ECHO, 'reject'], tools: modernTools } },
    toolsets: { echo: ['echo.echo'], modern: ['modern.echo', 'modern.era'], strict: ['strict.echo'] },
  });
  const opened: Connected[] = [];
  const open = async (name: string, connect: () => Promise<Connected>, tool?: string): Promise<CallPath> => {
    const connected = await connect();
    opened.push(connected);
    return { name, clients: connected.clients, tool: tool ?? (await exposedEchoName(connected.clients)), middle: connected.pid };
  };
  // The same four paths for a client of `era`, to `server` (directly, through both relays) and to
  // loadout with `toolset` equipped.
  const openEra = async (era: ClientEra, server: string, toolset: string): Promise<EraPaths> => {
    const spawnServer = (...prefix: string[]) => spawnMcp(process.execPath, [...prefix, server], { era });
    return {
      direct: await open(`direct ${era}`, async () => oneClient(await spawnServer()), 'echo'),
      relay: await open(`relay ${era}`, async () => oneClient(await spawnServer(RELAY, process.execPath)), 'echo'),
      jsonRelay: await open(`json relay ${era}`, async () => oneClient(await spawnServer(JSON_RELAY, process.execPath)), 'echo'),
      loadout: await open(`loadout ${era}`, async () => oneClient(await spawnLoadout(setup.args, ['--equip', toolset], { era }))),
    };
  };
  try {
    const legacy = await openEra('legacy', ECHO_FIXTURE, 'echo');
    const modern = await openEra('modern', MODERN_ECHO, 'modern');
    // A 2026-07-28 client through loadout to the 2025-only echo fixture: the era bridged downstream.
    const modernToLegacy = await open('loadout modern→legacy', async () =>
      oneClient(await spawnLoadout(setup.args, ['--equip', 'echo'], { era: 'modern' })),
    );
    const downstreamEra = await askEra(modern.loadout);
    // The same echo server refusing 2025 openings (`legacy: 'reject'`), which loadout reaches only by
    // negotiating 2026-07-28 downstream; when it cannot, row 1i says why instead of a figure.
    const modernOnly = await open('loadout modern→modern-only', async () =>
      oneClient(await spawnLoadout(setup.args, ['--equip', 'strict'], { era: 'modern' })),
    );
    const unreachable = await failureOfCall(modernOnly);

    const eraPaths = [legacy, modern].flatMap((paths) => [paths.direct, paths.relay, paths.jsonRelay, paths.loadout]);
    const { samples, cpuPerCall } = await sequentialSamples([...eraPaths, modernToLegacy, ...(unreachable ? [] : [modernOnly])], context);
    const summaryOf = (path: CallPath) => summarize(samples.get(path)!);
    const bridged = summaryOf(modernToLegacy);
    const modernDirect = summaryOf(modern.direct);
    const bridgedRow: BenchRow = {
      id: '1h',
      figure: `forwarded call p50, sequential (n=${bridged.n}, 2026-07-28 client → loadout → 2025-only echo server)`,
      loadout: formatMs(bridged.p50),
      limit: `2026-07-28 direct ${formatMs(modernDirect.p50)}; through loadout to the serveStdio echo ${formatMs(summaryOf(modern.loadout).p50)}`,
      ratio: ratio(bridged.p50, modernDirect.p50),
      target: '—',
      values: { loadoutP50Ms: bridged.p50, directP50Ms: modernDirect.p50 },
    };

    // stdio reuses the paths measured above; HTTP (2025 sessions) gets its own gateway and direct server.
    const httpLoadout = await open('loadout-http', () => HTTP_PATHS.gateway(setup));
    const httpDirect = await open('direct-http', HTTP_PATHS.direct, 'echo');
    const measured = await throughput([...eraPaths, httpLoadout, httpDirect], context);
    const perSecond = measured.perSecond;
    const httpRate = perSecond.get(httpLoadout)!;
    const httpLimit = perSecond.get(httpDirect)!;
    const httpRow: BenchRow = {
      id: '1d',
      figure: `${CONCURRENT_CALLERS} concurrent callers, calls/s (http, ${httpLoadout.clients.length} sessions)`,
      loadout: `${Math.round(httpRate)}/s`,
      limit: `direct http ${Math.round(httpLimit)}/s; direct stdio ${Math.round(perSecond.get(legacy.direct)!)}/s`,
      ratio: ratio(httpRate, httpLimit),
      target: 'ratio ≥ 0.95',
      pass: ratio(httpRate, httpLimit) >= 0.95,
      values: {
        loadoutCallsPerSecond: httpRate,
        directCallsPerSecond: perSecond.get(legacy.direct)!,
        directSameTransportCallsPerSecond: httpLimit,
      },
    };
    const legacyCpu = { sequential: cpuPerCall.get(legacy.loadout)!, concurrent: measured.cpuPerCall.get(legacy.loadout)! };
    const concurrently = `${CONCURRENT_CALLERS} concurrent callers`;
    return [
      ...latencyRows('legacy', legacy, summaryOf),
      stdioThroughputRow('legacy', legacy, perSecond),
      httpRow,
      cpuRow('legacy', 'e', 'sequential', cpuPerCall, legacy),
      cpuRow('legacy', 'f', concurrently, measured.cpuPerCall, legacy),
      ...latencyRows('modern', modern, summaryOf, downstreamEra),
      stdioThroughputRow('modern', modern, perSecond),
      cpuRow('modern', 'e', 'sequential', cpuPerCall, modern, legacyCpu.sequential),
      cpuRow('modern', 'f', concurrently, measured.cpuPerCall, modern, legacyCpu.concurrent),
      bridgedRow,
      modernOnlyRow(unreachable ?? summaryOf(modernOnly), modernDirect),
    ];
  } finally {
    await Promise.allSettled(opened.map((connected) => connected.close()));
    await setup.cleanup();
  }
}

// Rows a–c of one era: p50 and p99 against its direct server, and the added latency against its relays.
function latencyRows(era: ClientEra, paths: EraPaths, summaryOf: (path: CallPath) => Summary, downstreamEra?: string): BenchRow[] {
  const [d, r, j, l] = [paths.direct, paths.relay, paths.jsonRelay, paths.loadout].map(summaryOf) as [Summary, Summary, Summary, Summary];
  const { mark, words } = ERA_LABELS[era];
  const overheadMs = l.p50 - d.p50;
  const hopMs = r.p50 - d.p50;
  const downstream = downstreamEra ? `; loadout → server in ${downstreamEra}` : '';
  return [
    {
      id: `1a${mark}`,
      figure: `forwarded call p50, sequential (n=${l.n}, ${words}${downstream})`,
      loadout: formatMs(l.p50),
      // The bare relay's own ratio shows what any separate gateway process costs at least.
      limit: `direct ${formatMs(d.p50)}; bare relay ${formatMs(r.p50)} (${ratio(r.p50, d.p50).toFixed(2)}×)`,
      ratio: ratio(l.p50, d.p50),
      target: 'ratio ≤ 1.15',
      pass: ratio(l.p50, d.p50) <= 1.15,
      values: { loadoutP50Ms: l.p50, directP50Ms: d.p50, relayP50Ms: r.p50 },
    },
    {
      id: `1b${mark}`,
      figure: `forwarded call p99, sequential${era === 'legacy' ? '' : ` (${words})`}`,
      loadout: formatMs(l.p99),
      limit: `direct ${formatMs(d.p99)}`,
      ratio: ratio(l.p99, d.p99),
      target: '—',
      values: { loadoutP99Ms: l.p99, directP99Ms: d.p99, relayP99Ms: r.p99 },
    },
    {
      id: `1c${mark}`,
      figure: `added latency p50 (loadout − direct)${era === 'legacy' ? '' : ` (${words})`}`,
      loadout: formatMs(overheadMs),
      limit: `bare relay hop ${formatMs(hopMs)}; JSON-lines relay hop ${formatMs(j.p50 - d.p50)}`,
      ratio: ratio(overheadMs, hopMs),
      target: 'ratio ≤ 1.2 (and ≤ 0.2 ms)',
      pass: ratio(overheadMs, hopMs) <= 1.2,
      values: { overheadP50Ms: overheadMs, relayHopP50Ms: hopMs, jsonRelayHopP50Ms: j.p50 - d.p50 },
    },
  ];
}

// Row 1i: a 2026-07-28 client through loadout to a server that refuses the 2025 era, or why it
// could not be reached.
function modernOnlyRow(measured: Summary | string, direct: Summary): BenchRow {
  const figure = '2026-07-28 client → loadout → 2026-07-28-only echo server (legacy: reject)';
  if (typeof measured === 'string') {
    return { id: '1i', figure, loadout: 'not reachable', limit: measured, target: '—', values: { reachable: 0 } };
  }
  return {
    id: '1i',
    figure: `forwarded call p50, sequential (n=${measured.n}, ${figure})`,
    loadout: formatMs(measured.p50),
    limit: `2026-07-28 direct ${formatMs(direct.p50)}`,
    ratio: ratio(measured.p50, direct.p50),
    target: '—',
    values: { reachable: 1, loadoutP50Ms: measured.p50, directP50Ms: direct.p50 },
  };
}

// Why one echo call on `path` failed (its error, shortened), or undefined when it answered.
async function failureOfCall(path: CallPath): Promise<string | undefined> {
  try {
    const result = await path.clients[0]!.callTool({ name: path.tool, arguments: { text: 'ping' } });
    return result.isError ? shorten(firstText(result) ?? JSON.stringify(result.content)) : undefined;
  } catch (error) {
    return shorten(error instanceof Error ? error.message : String(error));
  }
}

function shorten(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}

// The protocol version the modern echo server saw on a call through loadout ("2025" when loadout
// reached it with initialize): the era loadout actually negotiated downstream.
async function askEra(path: CallPath): Promise<string> {
  const version = firstText(await path.clients[0]!.callTool({ name: 'modern_era', arguments: {} })) ?? 'unknown';
  return version === '2025' ? '2025 (initialize)' : version;
}

// The text of a tool result's first content block, if it is text.
function firstText(result: Awaited<ReturnType<Client['callTool']>>): string | undefined {
  const first = Array.isArray(result.content) ? result.content[0] : undefined;
  return first && first.type === 'text' ? first.text : undefined;
}

// A stdio server's tools, as a 2025 client lists them (for the setup's cached catalog).
async function listToolsOf(server: string): Promise<Awaited<ReturnType<Client['listTools']>>['tools']> {
  const spawned = await spawnMcp(process.execPath, [server]);
  try {
    return (await spawned.client.listTools()).tools;
  } finally {
    await spawned.close();
  }
}

function oneClient(process: McpProcess): Connected {
  return { clients: [process.client], pid: process.pid, close: () => process.close() };
}

// Row d of one era: 8 callers on one stdio connection; the bare relay under the same callers is
// the limit, the JSON-lines relay (a hop that reads every message, as any gateway must) and direct for scale.
function stdioThroughputRow(era: ClientEra, paths: EraPaths, perSecond: ReadonlyMap<CallPath, number>): BenchRow {
  const [loadoutRate, relayRate, jsonRelayRate, directRate] = [paths.loadout, paths.relay, paths.jsonRelay, paths.direct].map((path) =>
    perSecond.get(path)!,
  ) as [number, number, number, number];
  const [ofRelay, ofDirect] = [ratio(loadoutRate, relayRate), ratio(loadoutRate, directRate)];
  return {
    id: `1d${ERA_LABELS[era].mark}`,
    figure: `${CONCURRENT_CALLERS} concurrent callers, calls/s (${ERA_LABELS[era].words})`,
    loadout: `${Math.round(loadoutRate)}/s (${ofDirect.toFixed(2)}× direct)`,
    limit: `bare relay ${Math.round(relayRate)}/s; JSON-lines relay ${Math.round(jsonRelayRate)}/s; direct ${Math.round(directRate)}/s`,
    ratio: ofRelay,
    target: 'ratio ≥ 0.85, ≥ 0.6× direct',
    pass: ofRelay >= 0.85 && ofDirect >= 0.6,
    values: {
      loadoutCallsPerSecond: loadoutRate,
      relayCallsPerSecond: relayRate,
      jsonRelayCallsPerSecond: jsonRelayRate,
      directCallsPerSecond: directRate,
    },
  };
}

// Row e or f of one era: CPU time of the middle process per call, loadout's next to the two relays'
// of the same era (and, for 2026-07-28, next to loadout's own for a 2025 client in the same run).
// No target: it says where the latency and throughput ratios come from (docs/performance.md, row 1).
function cpuRow(
  era: ClientEra,
  letter: string,
  how: string,
  cpuPerCall: ReadonlyMap<CallPath, number>,
  paths: EraPaths,
  legacyLoadout?: number,
): BenchRow {
  const [loadout, relay, jsonRelay] = [paths.loadout, paths.relay, paths.jsonRelay].map((path) => cpuPerCall.get(path)!) as [
    number,
    number,
    number,
  ];
  const micros = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
  const legacy = legacyLoadout === undefined ? '' : `; loadout, 2025 client ${micros(legacyLoadout)}`;
  return {
    id: `1${letter}${ERA_LABELS[era].mark}`,
    figure: `CPU per call in the middle process, ${how} (${ERA_LABELS[era].words})`,
    loadout: micros(loadout),
    limit: `bare relay ${micros(relay)}; JSON-lines relay ${micros(jsonRelay)}${legacy}`,
    ratio: ratio(loadout, jsonRelay),
    target: '— (ratio to the JSON-lines relay)',
    values: {
      loadoutCpuMsPerCall: loadout,
      relayCpuMsPerCall: relay,
      jsonRelayCpuMsPerCall: jsonRelay,
      ...(legacyLoadout !== undefined && { legacyLoadoutCpuMsPerCall: legacyLoadout }),
    },
  };
}

// CPU time of each path's middle process while `run` runs, per call made through it.
async function cpuDuring(paths: CallPath[], run: () => Promise<Map<CallPath, number>>): Promise<Map<CallPath, number>> {
  const middles = paths.filter((path) => path.middle !== undefined);
  const before = await Promise.all(middles.map((path) => cpuTimeMs(path.middle!)));
  const calls = await run();
  const after = await Promise.all(middles.map((path) => cpuTimeMs(path.middle!)));
  return new Map(middles.map((path, i) => [path, (after[i]! - before[i]!) / calls.get(path)!]));
}

// Every client is its own session (over HTTP), so each must have the echo tool equipped.
async function exposedEchoName(clients: Client[]): Promise<string> {
  const names = new Set<string>();
  for (const client of clients) {
    const { tools } = await client.listTools();
    const echo = tools.find((tool) => tool.name.endsWith('echo') && tool.name !== 'echo');
    if (!echo) throw new Error(`loadout did not expose the echo tool; listed: ${tools.map((tool) => tool.name).join(', ')}`);
    names.add(echo.name);
  }
  if (names.size !== 1) throw new Error(`sessions exposed the echo tool under different names: ${[...names].join(', ')}`);
  return [...names][0]!;
}

function callEcho(path: CallPath, caller = 0): Promise<unknown> {
  return path.clients[caller % path.clients.length]!.callTool({ name: path.tool, arguments: { text: 'ping' } });
}

async function sequentialSamples(
  paths: CallPath[],
  context: BenchContext,
): Promise<{ samples: Map<CallPath, number[]>; cpuPerCall: Map<CallPath, number> }> {
  const { warmupCalls, sequentialCalls, batch } = context.scale;
  for (const path of paths) for (let call = 0; call < warmupCalls; call++) await callEcho(path);
  const samples = new Map(paths.map((path) => [path, [] as number[]]));
  const cpuPerCall = await cpuDuring(paths, async () => {
    for (let done = 0; done < sequentialCalls; done += batch) {
      for (const [path, into] of samples) {
        for (let call = 0; call < batch; call++) into.push(await timeMs(() => callEcho(path)));
      }
    }
    return new Map([...samples].map(([path, into]) => [path, into.length]));
  });
  return { samples, cpuPerCall };
}

// Median calls/s of each path over rounds; each round runs every path once, the order rotating
// by one each round so no path is always first (or always right after a busy one).
async function throughput(
  paths: CallPath[],
  context: BenchContext,
): Promise<{ perSecond: Map<CallPath, number>; cpuPerCall: Map<CallPath, number> }> {
  const { callsPerCaller, throughputRounds } = context.scale;
  const rates = new Map<CallPath, number[]>(paths.map((path) => [path, []]));
  const cpuPerCall = await cpuDuring(paths, async () => {
    for (let round = 0; round < throughputRounds; round++) {
      const order = [...paths.slice(round % paths.length), ...paths.slice(0, round % paths.length)];
      for (const path of order) {
        const ms = await timeMs(() =>
          Promise.all(
            Array.from({ length: CONCURRENT_CALLERS }, async (_, caller) => {
              for (let call = 0; call < callsPerCaller; call++) await callEcho(path, caller);
            }),
          ),
        );
        rates.get(path)!.push((CONCURRENT_CALLERS * callsPerCaller * 1000) / ms);
      }
    }
    return new Map(paths.map((path) => [path, throughputRounds * CONCURRENT_CALLERS * callsPerCaller]));
  });
  return { perSecond: new Map([...rates].map(([path, perSecond]) => [path, summarize(perSecond).p50])), cpuPerCall };
}
