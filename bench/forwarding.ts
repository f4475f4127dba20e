// Row 1: what loadout adds to a forwarded call. The same echo fixture is called directly, through
// a zero-logic relay process (the physical floor of one extra hop) and through `loadout serve`,
// in interleaved batches so machine noise hits all three alike; then calls/s of 8 concurrent
// callers through loadout over stdio (next to the bare relay and direct under the same callers)
// and over streamable HTTP (next to direct HTTP).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createSetup, ECHO_FIXTURE, RELAY, type BenchSetup } from './catalogFixture.js';
import { spawnHttpFixture, spawnHttpLoadout } from './httpProcess.js';
import { spawnLoadout, spawnMcp, type McpProcess } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatMs, ratio, summarize, timeMs } from './stats.js';

const CONCURRENT_CALLERS = 8;

/** One way of calling the echo tool, timed as a whole path. */
interface CallPath {
  name: string;
  /** Connected clients; caller i of the concurrent callers uses `clients[i % clients.length]`. */
  clients: Client[];
  /** The echo tool's name on this path (`echo` directly, the flattened name through loadout). */
  tool: string;
}

/** Clients of one spawned server, and how to end them and it. */
interface Connected {
  clients: Client[];
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
    return { name, clients: connected.clients, tool: tool ?? (await exposedEchoName(connected.clients)) };
  };
  try {
    const direct = await open('direct', GATEWAY_TRANSPORTS.stdio!.direct, 'echo');
    const relay = await open(
      'relay',
      async () => oneClient(await spawnMcp(process.execPath, [RELAY, process.execPath, ECHO_FIXTURE])),
      'echo',
    );
    const loadout = await open('loadout', () => GATEWAY_TRANSPORTS.stdio!.gateway(setup));

    const samples = await sequentialSamples([direct, relay, loadout], context);
    const [d, r, l] = [summarize(samples.get('direct')!), summarize(samples.get('relay')!), summarize(samples.get('loadout')!)];
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
        limit: `bare relay hop ${formatMs(hopMs)}`,
        ratio: ratio(overheadMs, hopMs),
        target: 'ratio ≤ 1.2 (SPEC: ≤ 0.2 ms)',
        pass: ratio(overheadMs, hopMs) <= 1.2,
        values: { overheadP50Ms: overheadMs, relayHopP50Ms: hopMs },
      },
    ];
    // stdio reuses the paths measured above; another transport gets its own gateway and direct server.
    const pairs = new Map<string, { through: CallPath; limit: CallPath }>([['stdio', { through: loadout, limit: relay }]]);
    for (const [transport, connect] of Object.entries(GATEWAY_TRANSPORTS)) {
      if (transport === 'stdio') continue;
      pairs.set(transport, {
        through: await open(`loadout-${transport}`, () => connect.gateway(setup)),
        limit: await open(`direct-${transport}`, connect.direct, 'echo'),
      });
    }
    const perSecond = await throughput([direct, ...[...pairs.values()].flatMap(({ through, limit }) => [through, limit])], context);
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
    return rows;
  } finally {
    await Promise.allSettled(opened.map((connected) => connected.close()));
    await setup.cleanup();
  }
}

function oneClient(process: McpProcess): Connected {
  return { clients: [process.client], close: () => process.close() };
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

async function sequentialSamples(paths: CallPath[], context: BenchContext): Promise<Map<string, number[]>> {
  const { warmupCalls, sequentialCalls, batch } = context.scale;
  for (const path of paths) for (let call = 0; call < warmupCalls; call++) await callEcho(path);
  const samples = new Map(paths.map((path) => [path.name, [] as number[]]));
  for (let done = 0; done < sequentialCalls; done += batch) {
    for (const path of paths) {
      const into = samples.get(path.name)!;
      for (let call = 0; call < batch; call++) into.push(await timeMs(() => callEcho(path)));
    }
  }
  return samples;
}

// Median calls/s of each path over rounds; each round runs every path once, the order rotating
// by one each round so no path is always first (or always right after a busy one).
async function throughput(paths: CallPath[], context: BenchContext): Promise<Map<CallPath, number>> {
  const { callsPerCaller, throughputRounds } = context.scale;
  const rates = new Map<CallPath, number[]>(paths.map((path) => [path, []]));
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
  return new Map([...rates].map(([path, perSecond]) => [path, summarize(perSecond).p50]));
}
