// Row 1: what loadout adds to a forwarded call. The same echo fixture is called directly, through
// a zero-logic relay process (the physical floor of one extra hop), through a JSON-lines relay
// (the floor of a hop that reads every message) and through `loadout serve`, in interleaved
// batches so machine noise hits all alike; then calls/s of 8 concurrent callers through loadout
// over stdio (next to the bare relay and direct under the same callers) and over streamable HTTP
// (next to direct HTTP). The CPU time each middle process spends per call is read from /proc
// beside the wall times: on a busy machine it moves far less than latency does.
import type { Client } from '@modelcontextprotocol/client';
import { createSetup, ECHO_FIXTURE, JSON_RELAY, RELAY, type BenchSetup } from './catalogFixture.js';
import { spawnHttpFixture, spawnHttpLoadout } from './httpProcess.js';
import { cpuTimeMs, spawnLoadout, spawnMcp, type McpProcess } from './processes.js';
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
 * How the bench's callers reach loadout for the throughput figure, and the same echo tool reached
 * directly over that transport (the transport's own limit). stdio: one connection shared by the
 * callers, as one agent has. HTTP: one MCP session per caller, as a multi-client deployment has.
 */
const GATEWAY_TRANSPORTS: Record<string, { gateway: (setup: BenchSetup) => Promise<Connected>; direct: () => Promise<Connected> }> = {
  stdio: {
    gateway: async (setup) => oneClient(await spawnLoadout(setup.args, ['--equip', 'echo'])),
    direct: async () => oneClient(await spawnMcp(process.execPath, [ECHO_FIXTURE])),
  },
  http: {
    gateway: (setup) => spawnHttpLoadout(setup.args, ['--equip', 'echo'], CONCURRENT_CALLERS),
    direct: () => spawnHttpFixture(CONCURRENT_CALLERS),
  },
};

/** Rows 1a–1d. */
export async function benchForwarding(context: BenchContext): Promise<BenchRow[]> {
  const setup = await createSetup({ servers: 0, toolsPerServer: 0, echoTools: context.echoTools, toolsets: { echo: ['echo.echo'] } });
  const opened: Connected[] = [];
  const open = async (name: string, connect: () => Promise<Connected>, tool?: string): Promise<CallPath> => {
    const connected = await connect();
    opened.push(connected);
    return { name, clients: connected.clients, tool: tool ?? (await exposedEchoName(connected.clients)), middle: connected.pid };
  };
  try {
    const direct = await open('direct', GATEWAY_TRANSPORTS.stdio!.direct, 'echo');
    const relay = await open(
      'relay',
      async () => oneClient(await spawnMcp(process.execPath, [RELAY, process.execPath, ECHO_FIXTURE])),
      'echo',
    );
    const jsonRelay = await open(
      'json relay',
      async () => oneClient(await spawnMcp(process.execPath, [JSON_RELAY, process.execPath, ECHO_FIXTURE])),
      'echo',
    );
    const loadout = await open('loadout', () => GATEWAY_TRANSPORTS.stdio!.gateway(setup));

    const { samples, cpuPerCall } = await sequentialSamples([direct, relay, jsonRelay, loadout], context);
    const [d, r, j, l] = [direct, relay, jsonRelay, loadout].map((path) => summarize(samples.get(path)!)) as [
      Summary,
      Summary,
      Summary,
      Summary,
    ];
    const overheadMs = l.p50 - d.p50;
    const hopMs = r.p50 - d.p50;
    const rows: BenchRow[] = [
      {
        id: '1a',
        figure: `forwarded call p50, sequential (n=${l.n}, stdio)`,
        loadout: formatMs(l.p50),
        // The bare relay's own ratio shows what any separate gateway process costs at least.
        limit: `direct ${formatMs(d.p50)}; bare relay ${formatMs(r.p50)} (${ratio(r.p50, d.p50).toFixed(2)}×)`,
        ratio: ratio(l.p50, d.p50),
        target: 'ratio ≤ 1.15',
        pass: ratio(l.p50, d.p50) <= 1.15,
        values: { loadoutP50Ms: l.p50, directP50Ms: d.p50, relayP50Ms: r.p50 },
      },
      {
        id: '1b',
        figure: 'forwarded call p99, sequential',
        loadout: formatMs(l.p99),
        limit: `direct ${formatMs(d.p99)}`,
        ratio: ratio(l.p99, d.p99),
        target: '—',
        values: { loadoutP99Ms: l.p99, directP99Ms: d.p99, relayP99Ms: r.p99 },
      },
      {
        id: '1c',
        figure: 'added latency p50 (loadout − direct)',
        loadout: formatMs(overheadMs),
        limit: `bare relay hop ${formatMs(hopMs)}; JSON-lines relay hop ${formatMs(j.p50 - d.p50)}`,
        ratio: ratio(overheadMs, hopMs),
        target: 'ratio ≤ 1.2 (and ≤ 0.2 ms)',
        pass: ratio(overheadMs, hopMs) <= 1.2,
        values: { overheadP50Ms: overheadMs, relayHopP50Ms: hopMs, jsonRelayHopP50Ms: j.p50 - d.p50 },
      },
    ];
    // stdio reuses the paths measured above; another transport gets its own gateway and direct server.
    const pairs = new Map<string, { through: CallPath; limit: CallPath }>([['stdio', { through: loadout, limit: relay }]]);
    const cpuReferences = [jsonRelay];
    for (const [transport, connect] of Object.entries(GATEWAY_TRANSPORTS)) {
      if (transport === 'stdio') continue;
      pairs.set(transport, {
        through: await open(`loadout-${transport}`, () => connect.gateway(setup)),
        limit: await open(`direct-${transport}`, connect.direct, 'echo'),
      });
    }
    const measured = await throughput(
      [direct, ...cpuReferences, ...[...pairs.values()].flatMap(({ through, limit }) => [through, limit])],
      context,
    );
    const perSecond = measured.perSecond;
    const directPerSecond = perSecond.get(direct)!;
    for (const [transport, { through, limit }] of pairs) {
      const [loadoutRate, limitRate] = [perSecond.get(through)!, perSecond.get(limit)!];
      if (limit === relay) {
        // One stdio connection: the bare relay under the same callers is the limit, direct for scale.
        const [ofRelay, ofDirect] = [ratio(loadoutRate, limitRate), ratio(loadoutRate, directPerSecond)];
        rows.push({
          id: '1d',
          figure: `${CONCURRENT_CALLERS} concurrent callers, calls/s (stdio)`,
          loadout: `${Math.round(loadoutRate)}/s (${ofDirect.toFixed(2)}× direct)`,
          limit: `bare relay ${Math.round(limitRate)}/s; direct ${Math.round(directPerSecond)}/s`,
          ratio: ofRelay,
          target: 'ratio ≥ 0.85, ≥ 0.6× direct',
          pass: ofRelay >= 0.85 && ofDirect >= 0.6,
          values: { loadoutCallsPerSecond: loadoutRate, relayCallsPerSecond: limitRate, directCallsPerSecond: directPerSecond },
        });
        continue;
      }
      rows.push({
        id: '1d',
        figure: `${CONCURRENT_CALLERS} concurrent callers, calls/s (${transport}, ${through.clients.length} sessions)`,
        loadout: `${Math.round(loadoutRate)}/s`,
        limit: `direct ${transport} ${Math.round(limitRate)}/s; direct stdio ${Math.round(directPerSecond)}/s`,
        ratio: ratio(loadoutRate, limitRate),
        target: 'ratio ≥ 0.95',
        pass: ratio(loadoutRate, limitRate) >= 0.95,
        values: { loadoutCallsPerSecond: loadoutRate, directCallsPerSecond: directPerSecond, directSameTransportCallsPerSecond: limitRate },
      });
    }
    const cpuPaths = { loadout, relay, jsonRelay };
    rows.push(
      cpuRow('1e', 'sequential', cpuPerCall, cpuPaths),
      cpuRow('1f', `${CONCURRENT_CALLERS} concurrent callers`, measured.cpuPerCall, cpuPaths),
    );
    return rows;
  } finally {
    await Promise.allSettled(opened.map((connected) => connected.close()));
    await setup.cleanup();
  }
}

function oneClient(process: McpProcess): Connected {
  return { clients: [process.client], pid: process.pid, close: () => process.close() };
}

// CPU time of the middle process per call, loadout's next to the two relays'. No target: it says
// where the latency and throughput ratios come from (see docs/performance.md on row 1).
function cpuRow(
  id: string,
  how: string,
  cpuPerCall: ReadonlyMap<CallPath, number>,
  paths: { loadout: CallPath; relay: CallPath; jsonRelay: CallPath },
): BenchRow {
  const [loadout, relay, jsonRelay] = [paths.loadout, paths.relay, paths.jsonRelay].map((path) => cpuPerCall.get(path)!) as [
    number,
    number,
    number,
  ];
  const micros = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
  return {
    id,
    figure: `CPU per call in the middle process, ${how} (stdio)`,
    loadout: micros(loadout),
    limit: `bare relay ${micros(relay)}; JSON-lines relay ${micros(jsonRelay)}`,
    ratio: ratio(loadout, jsonRelay),
    target: '— (ratio to the JSON-lines relay)',
    values: { loadoutCpuMsPerCall: loadout, relayCpuMsPerCall: relay, jsonRelayCpuMsPerCall: jsonRelay },
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
