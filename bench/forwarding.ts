// Row 1: what loadout adds to a forwarded call. The same echo fixture is called directly, through
// a zero-logic relay process (the physical floor of one extra hop) and through `loadout serve`,
// in interleaved batches so machine noise hits all three alike.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createSetup, ECHO_FIXTURE, RELAY, type BenchSetup } from './catalogFixture.js';
import { spawnLoadout, spawnMcp, type McpProcess } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatMs, ratio, summarize, timeMs } from './stats.js';

const CONCURRENT_CALLERS = 8;

/** One way of calling the echo tool, timed as a whole path. */
interface CallPath {
  name: string;
  process: McpProcess;
  /** The echo tool's name on this path (`echo` directly, the flattened name through loadout). */
  tool: string;
}

/**
 * How the bench's client reaches loadout for the throughput figure. Only stdio exists today;
 * when `serve --http` lands, add an entry that spawns it and connects a
 * StreamableHTTPClientTransport, and its calls/s row appears next to stdio's.
 */
const GATEWAY_TRANSPORTS: Record<string, (setup: BenchSetup) => Promise<McpProcess>> = {
  stdio: (setup) => spawnLoadout(setup.args, ['--equip', 'echo']),
};

/** Rows 1a–1d. */
export async function benchForwarding(context: BenchContext): Promise<BenchRow[]> {
  const setup = await createSetup({ servers: 0, toolsPerServer: 0, echoTools: context.echoTools, toolsets: { echo: ['echo.echo'] } });
  const opened: McpProcess[] = [];
  try {
    const direct: CallPath = { name: 'direct', process: await spawnMcp(process.execPath, [ECHO_FIXTURE]), tool: 'echo' };
    opened.push(direct.process);
    const relay: CallPath = { name: 'relay', process: await spawnMcp(process.execPath, [RELAY, process.execPath, ECHO_FIXTURE]), tool: 'echo' };
    opened.push(relay.process);
    const gatewayProcess = await GATEWAY_TRANSPORTS.stdio!(setup);
    opened.push(gatewayProcess);
    const loadout: CallPath = { name: 'loadout', process: gatewayProcess, tool: await exposedEchoName(gatewayProcess.client) };
    const paths = [direct, relay, loadout];

    const samples = await sequentialSamples(paths, context);
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
        target: '≤ 0.2 ms',
        pass: overheadMs <= 0.2,
        values: { overheadP50Ms: overheadMs, relayHopP50Ms: hopMs },
      },
    ];
    for (const [transport, connect] of Object.entries(GATEWAY_TRANSPORTS)) {
      // stdio reuses the gateway measured above; another transport gets its own gateway.
      let through = loadout;
      if (transport !== 'stdio') {
        through = { ...loadout, name: `loadout-${transport}`, process: await connect(setup) };
        opened.push(through.process);
      }
      const { perSecond, directPerSecond } = await throughput(through, direct, context);
      rows.push({
        id: '1d',
        figure: `${CONCURRENT_CALLERS} concurrent callers, calls/s (${transport})`,
        loadout: `${Math.round(perSecond)}/s`,
        limit: `direct ${Math.round(directPerSecond)}/s`,
        ratio: ratio(directPerSecond, perSecond),
        target: '— (ratio = direct ÷ loadout)',
        values: { loadoutCallsPerSecond: perSecond, directCallsPerSecond: directPerSecond },
      });
    }
    return rows;
  } finally {
    await Promise.allSettled(opened.map((process) => process.close()));
    await setup.cleanup();
  }
}

async function exposedEchoName(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  const echo = tools.find((tool) => tool.name.endsWith('echo') && tool.name !== 'echo');
  if (!echo) throw new Error(`loadout did not expose the echo tool; listed: ${tools.map((tool) => tool.name).join(', ')}`);
  return echo.name;
}

function callEcho(path: CallPath): Promise<unknown> {
  return path.process.client.callTool({ name: path.tool, arguments: { text: 'ping' } });
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

// Median calls/s over rounds; each round runs both paths, loadout first and direct second, then swapped.
async function throughput(loadout: CallPath, direct: CallPath, context: BenchContext): Promise<{ perSecond: number; directPerSecond: number }> {
  const { callsPerCaller, throughputRounds } = context.scale;
  const rates = new Map<CallPath, number[]>([
    [loadout, []],
    [direct, []],
  ]);
  for (let round = 0; round < throughputRounds; round++) {
    const order = round % 2 ? [direct, loadout] : [loadout, direct];
    for (const path of order) {
      const ms = await timeMs(() =>
        Promise.all(Array.from({ length: CONCURRENT_CALLERS }, async () => {
          for (let call = 0; call < callsPerCaller; call++) await callEcho(path);
        })),
      );
      rates.get(path)!.push((CONCURRENT_CALLERS * callsPerCaller * 1000) / ms);
    }
  }
  return { perSecond: summarize(rates.get(loadout)!).p50, directPerSecond: summarize(rates.get(direct)!).p50 };
}
