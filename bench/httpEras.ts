// Row 1g: what a forwarded call costs `loadout serve --http` in each protocol era. A 2025-era
// client calls within its MCP session; a 2026-07-28 client's every call is served on its own
// (a Server built for the request, the principal's equipped set checked against its file). Both
// call the echo tool of one process, in alternating batches; the CPU time loadout spends in each
// batch is read from /proc.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createSetup } from './catalogFixture.js';
import { spawnHttpLoadout } from './httpProcess.js';
import { cpuTimeMs } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatMs, ratio, summarize, timeMs } from './stats.js';

/** Row 1g. */
export async function benchHttpEras(context: BenchContext): Promise<BenchRow[]> {
  const setup = await createSetup({ servers: 0, toolsPerServer: 0, echoTools: context.echoTools, toolsets: { echo: ['echo.echo'] } });
  const http = await spawnHttpLoadout(setup.args, ['--equip', 'echo'], 1);
  const modern = new Client({ name: 'loadout-bench-modern', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  try {
    await modern.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    if (modern.getProtocolEra() !== 'modern') throw new Error(`the negotiating client ended up ${modern.getProtocolEra()}`);
    const tool = (await modern.listTools()).tools.find((listed) => listed.name.endsWith('echo'))?.name;
    if (!tool) throw new Error('loadout did not expose the echo tool to the modern client');
    const eras = { legacy: http.clients[0]!, modern };
    const call = (client: Client) => client.callTool({ name: tool, arguments: { text: 'ping' } });
    const { warmupCalls, sequentialCalls, batch } = context.scale;
    for (const client of Object.values(eras)) for (let done = 0; done < warmupCalls; done++) await call(client);

    const samples = { legacy: [] as number[], modern: [] as number[] };
    const cpuMs = { legacy: 0, modern: 0 };
    for (let done = 0; done < sequentialCalls; done += batch) {
      for (const era of ['legacy', 'modern'] as const) {
        const before = await cpuTimeMs(http.pid);
        for (let n = 0; n < batch; n++) samples[era].push(await timeMs(() => call(eras[era])));
        cpuMs[era] += (await cpuTimeMs(http.pid)) - before;
      }
    }
    const [legacy, fresh] = [summarize(samples.legacy), summarize(samples.modern)];
    const [legacyCpu, modernCpu] = [cpuMs.legacy / samples.legacy.length, cpuMs.modern / samples.modern.length];
    const micros = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
    return [
      {
        id: '1g',
        figure: `CPU per forwarded call, 2026-07-28 request vs 2025 session (HTTP, n=${fresh.n})`,
        loadout: `${micros(modernCpu)} (p50 ${formatMs(fresh.p50)})`,
        limit: `2025 session ${micros(legacyCpu)} (p50 ${formatMs(legacy.p50)})`,
        ratio: ratio(modernCpu, legacyCpu),
        target: '— (ratio to the 2025 session)',
        values: { modernCpuMsPerCall: modernCpu, legacyCpuMsPerCall: legacyCpu, modernP50Ms: fresh.p50, legacyP50Ms: legacy.p50 },
      },
    ];
  } finally {
    await modern.close().catch(() => undefined);
    await http.close();
    await setup.cleanup();
  }
}
