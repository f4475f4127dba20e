// Row 8: what telemetry costs a forwarded call. Two `loadout serve` processes in front of the same
// echo fixture, one with telemetry off (the default) and one exporting every span and metric over
// OTLP/HTTP to a loopback collector in this process; the CPU time each spends per call is read
// from /proc, the two interleaved in batches so the machine's load falls on both alike.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSetup } from './catalogFixture.js';
import { cpuTimeMs, spawnLoadout, type McpProcess } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { ratio } from './stats.js';

const CONCURRENT_CALLERS = 8;
// CPU time is read in 10 ms ticks, and a batch of calls takes a few: four times the rounds of the
// other rows keep the rounding well under the 10 % this row checks.
const ROUNDS_FACTOR = 4;
/** Most extra CPU per call telemetry may cost when on (the target). */
const ON_TARGET_RATIO = 1.1;

// A collector that takes every export and answers it, as a local OpenTelemetry Collector would.
async function startSink(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function exposedEcho(loadout: McpProcess): Promise<string> {
  const { tools } = await loadout.client.listTools();
  const echo = tools.find((tool) => tool.name.endsWith('echo') && tool.name !== 'echo');
  if (!echo) throw new Error(`loadout did not expose the echo tool: ${loadout.stderr()}`);
  return echo.name;
}

// The configurations compared with telemetry off: OTEL_* as an operator would set them.
const CONFIGURATIONS = (collector: string) => ({
  traced: { OTEL_EXPORTER_OTLP_ENDPOINT: collector, OTEL_METRIC_EXPORT_INTERVAL: '5000' },
  sampled: {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector,
    OTEL_METRIC_EXPORT_INTERVAL: '5000',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
  },
  metrics: { OTEL_EXPORTER_OTLP_ENDPOINT: collector, OTEL_METRIC_EXPORT_INTERVAL: '5000', OTEL_TRACES_EXPORTER: 'none' },
});
type Configuration = 'off' | keyof ReturnType<typeof CONFIGURATIONS>;
const WORDS: Record<Exclude<Configuration, 'off'>, string> = {
  traced: 'every call traced and exported over OTLP',
  sampled: '1 call in 10 traced (parentbased_traceidratio 0.1)',
  metrics: 'metrics only (OTEL_TRACES_EXPORTER=none)',
};

/** Row 8: CPU per forwarded call with telemetry on, each configuration ÷ telemetry off, sequential and concurrent. */
export async function benchTelemetry(context: BenchContext): Promise<BenchRow[]> {
  const { warmupCalls, sequentialCalls, batch, callsPerCaller, throughputRounds } = context.scale;
  const setup = await createSetup({ servers: 0, toolsPerServer: 0, echoTools: context.echoTools, toolsets: { echo: ['echo.echo'] } });
  const sink = await startSink();
  const spawned: McpProcess[] = [];
  try {
    const spawn = async (env: Record<string, string>) => {
      const loadout = await spawnLoadout(setup.args, ['--equip', 'echo'], { env });
      spawned.push(loadout);
      return { loadout, tool: await exposedEcho(loadout) };
    };
    type Path = Awaited<ReturnType<typeof spawn>>;
    const paths = new Map<Configuration, Path>([['off', await spawn({})]]);
    for (const [name, env] of Object.entries(CONFIGURATIONS(sink.url))) paths.set(name as Configuration, await spawn(env));
    const call = (path: Path) => path.loadout.client.callTool({ name: path.tool, arguments: { text: 'ping' } });
    for (const path of paths.values()) for (let done = 0; done < warmupCalls; done++) await call(path);

    // CPU time per call of each path, the paths taking turns a batch at a time.
    const rounds = Math.max(1, Math.round((ROUNDS_FACTOR * sequentialCalls) / batch));
    const cpuPerCall = async (run: (path: Path) => Promise<number>): Promise<Map<Configuration, number>> => {
      const spent = new Map([...paths.keys()].map((name) => [name, { ms: 0, calls: 0 }]));
      for (let round = 0; round < rounds; round++) {
        for (const [name, path] of paths) {
          const before = await cpuTimeMs(path.loadout.pid);
          const calls = await run(path);
          const total = spent.get(name)!;
          total.calls += calls;
          total.ms += (await cpuTimeMs(path.loadout.pid)) - before;
        }
      }
      return new Map([...spent].map(([name, { ms, calls }]) => [name, ms / calls]));
    };
    const sequential = await cpuPerCall(async (path) => {
      for (let done = 0; done < batch; done++) await call(path);
      return batch;
    });
    const callsEach = Math.max(1, Math.round((ROUNDS_FACTOR * callsPerCaller * throughputRounds) / rounds));
    const concurrent = await cpuPerCall(async (path) => {
      await Promise.all(
        Array.from({ length: CONCURRENT_CALLERS }, async () => {
          for (let done = 0; done < callsEach; done++) await call(path);
        }),
      );
      return CONCURRENT_CALLERS * callsEach;
    });
    const micros = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
    const rows: BenchRow[] = [];
    let letter = 'a'.charCodeAt(0);
    for (const [how, measured] of [
      ['sequential', sequential],
      [`${CONCURRENT_CALLERS} concurrent callers`, concurrent],
    ] as const) {
      const offMs = measured.get('off')!;
      for (const name of Object.keys(WORDS) as Array<keyof typeof WORDS>) {
        const onMs = measured.get(name)!;
        rows.push({
          id: `8${String.fromCharCode(letter++)}`,
          figure: `CPU per forwarded call, telemetry on: ${WORDS[name]}; ${how}`,
          loadout: micros(onMs),
          limit: `telemetry off ${micros(offMs)}`,
          ratio: ratio(onMs, offMs),
          target: `ratio ≤ ${ON_TARGET_RATIO.toFixed(2)}`,
          pass: ratio(onMs, offMs) <= ON_TARGET_RATIO,
          values: { telemetryOnCpuMsPerCall: onMs, telemetryOffCpuMsPerCall: offMs },
        });
      }
    }
    return rows;
  } finally {
    await Promise.allSettled(spawned.map((loadout) => loadout.close()));
    await new Promise((resolve) => sink.server.close(resolve));
    await setup.cleanup();
  }
}
