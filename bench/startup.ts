// Rows 2 and 3: starting. Warm start is spawn → first tools/list answered with a cached catalog of
// lazy servers (nothing may be spawned); cold first call is the first call to a lazy server's
// tool. Both are compared with the trivial echo server doing the same on its own; warm start also
// with that server bundled as loadout is, the least any SDK server takes to answer here. Warm start
// is measured for a 2025 client (2a/2b) and, in the same run, for a client negotiating 2026-07-28
// (2a′/2b′, probing server/discover on the connection as Claude Code does) against the bundled
// serveStdio echo server as its floor.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { BUNDLED_ECHO_FIXTURE, BUNDLED_MODERN_ECHO, createSetup, ECHO_FIXTURE, type BenchSetup } from './catalogFixture.js';
import { cpuTimeMs, descendantsOf, spawnLoadout, spawnMcp, type ClientEra, type McpProcess } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatMs, ratio, summarize } from './stats.js';

const TOOLS_PER_SERVER = 50;
const WARM_START_TARGET_MS = 200;

/** The samples of one kind of start: wall time, CPU time, children at the first answer. */
interface StartSamples {
  ms: number[];
  cpuMs: number[];
  children: number[];
}

const noSamples = (): StartSamples => ({ ms: [], cpuMs: [], children: [] });

function record(into: StartSamples, start: { ms: number; cpuMs: number; children: number }): void {
  into.ms.push(start.ms);
  into.cpuMs.push(start.cpuMs);
  into.children.push(start.children);
}

/** Rows 2a–2b (2025 client) and 2a′–2b′ (2026-07-28 client): warm start with 50 and 200 lazy servers. */
export async function benchWarmStart(context: BenchContext): Promise<BenchRow[]> {
  const setups = new Map<number, BenchSetup>();
  for (const servers of [50, 200]) {
    setups.set(servers, await createSetup({ servers, toolsPerServer: TOOLS_PER_SERVER, echoTools: context.echoTools }));
  }
  const eras: ClientEra[] = ['legacy', 'modern'];
  try {
    const bareNode: number[] = [];
    const trivial = noSamples();
    const bundledTrivial = new Map(eras.map((era) => [era, noSamples()]));
    const loadout = new Map(eras.map((era) => [era, new Map([...setups.keys()].map((servers) => [servers, noSamples()]))]));
    for (let repeat = 0; repeat < context.scale.startRepeats; repeat++) {
      bareNode.push(await bareNodeMs());
      record(trivial, await spawnToFirstList(() => spawnMcp(process.execPath, [ECHO_FIXTURE])));
      record(bundledTrivial.get('legacy')!, await spawnToFirstList(() => spawnMcp(process.execPath, [BUNDLED_ECHO_FIXTURE])));
      const modernFloor = bundledTrivial.get('modern')!;
      record(modernFloor, await spawnToFirstList(() => spawnMcp(process.execPath, [BUNDLED_MODERN_ECHO], { era: 'modern' })));
      for (const era of eras) {
        for (const [servers, setup] of setups) {
          record(loadout.get(era)!.get(servers)!, await spawnToFirstList(() => spawnLoadout(setup.args, [], { era })));
        }
      }
    }
    const baseline = summarize(trivial.ms);
    const baselineCpu = summarize(trivial.cpuMs);
    const bare = summarize(bareNode);
    return eras.flatMap((era) => {
      const floor = summarize(bundledTrivial.get(era)!.ms);
      const modern = era === 'modern';
      return [...loadout.get(era)!].map(([servers, { ms, cpuMs, children }], index) => {
        const start = summarize(ms);
        const cpu = summarize(cpuMs);
        const maxChildren = Math.max(...children);
        const floorText = modern
          ? `bundled serveStdio server, 2026-07-28 client ${formatMs(floor.p50)}; 2025 client: bundled ${formatMs(summarize(bundledTrivial.get('legacy')!.ms).p50)}`
          : `trivial server ${formatMs(baseline.p50)} (cpu ${formatMs(baselineCpu.p50)}), bundled ${formatMs(floor.p50)}`;
        return {
          id: `2${'ab'[index]}${modern ? '′' : ''}`,
          figure: `warm start → first tools/list, ${servers} lazy servers (${servers * TOOLS_PER_SERVER + context.echoTools.length} tools); children${modern ? ' (2026-07-28 client, discover probed in place)' : ''}`,
          loadout: `${formatMs(start.p50)} (p99 ${formatMs(start.p99)}, cpu ${formatMs(cpu.p50)}); ${maxChildren} children`,
          // The ratio is to the bundled trivial server of the same era: loadout is bundled, so that is its floor.
          limit: `${floorText}; bare node ${formatMs(bare.p50)}`,
          ratio: ratio(start.p50, floor.p50),
          target: `≤ ${WARM_START_TARGET_MS} ms, 0 children`,
          pass: start.p50 <= WARM_START_TARGET_MS && maxChildren === 0,
          values: {
            servers,
            loadoutP50Ms: start.p50,
            loadoutP99Ms: start.p99,
            trivialP50Ms: baseline.p50,
            trivialP99Ms: baseline.p99,
            loadoutCpuP50Ms: cpu.p50,
            trivialCpuP50Ms: baselineCpu.p50,
            bundledTrivialP50Ms: floor.p50,
            bareNodeP50Ms: bare.p50,
            maxChildren,
          },
        };
      });
    });
  } finally {
    for (const setup of setups.values()) await setup.cleanup();
  }
}

/** Row 3: first call to a lazy server's tool through loadout vs that server's own spawn → answer. */
export async function benchColdFirstCall(context: BenchContext): Promise<BenchRow[]> {
  const setup = await createSetup({
    servers: 49,
    toolsPerServer: TOOLS_PER_SERVER,
    echoTools: context.echoTools,
    toolsets: { echo: ['echo.echo'] },
  });
  try {
    const own: number[] = [];
    const through: number[] = [];
    for (let repeat = 0; repeat < context.scale.startRepeats; repeat++) {
      let startedAt = performance.now();
      const server = await spawnMcp(process.execPath, [ECHO_FIXTURE]);
      await server.client.callTool({ name: 'echo', arguments: { text: 'first' } });
      own.push(performance.now() - startedAt);
      await server.close();

      const gateway = await spawnLoadout(setup.args, ['--equip', 'echo']);
      try {
        const { tools } = await gateway.client.listTools();
        if (!tools.some((tool) => tool.name === 'echo_echo')) throw new Error('loadout did not expose echo_echo');
        startedAt = performance.now();
        await gateway.client.callTool({ name: 'echo_echo', arguments: { text: 'first' } });
        through.push(performance.now() - startedAt);
      } finally {
        await gateway.close();
      }
    }
    const loadout = summarize(through);
    const baseline = summarize(own);
    return [
      {
        id: '3',
        figure: 'cold first call to a lazy server (spawn + handshake + call)',
        loadout: `${formatMs(loadout.p50)} (p99 ${formatMs(loadout.p99)})`,
        limit: `server's own spawn→answer ${formatMs(baseline.p50)}`,
        ratio: ratio(loadout.p50, baseline.p50),
        target: '— (no target)',
        values: { loadoutP50Ms: loadout.p50, loadoutP99Ms: loadout.p99, ownSpawnP50Ms: baseline.p50, ownSpawnP99Ms: baseline.p99 },
      },
    ];
  } finally {
    await setup.cleanup();
  }
}

// Wall time to the first answered tools/list, plus the process's own CPU time by then (less
// sensitive than wall time to other load on the machine) and its child processes at that moment.
async function spawnToFirstList(spawn: () => Promise<McpProcess>): Promise<{ ms: number; cpuMs: number; children: number }> {
  const startedAt = performance.now();
  const server = await spawn();
  try {
    await server.client.listTools();
    const ms = performance.now() - startedAt;
    return { ms, cpuMs: await cpuTimeMs(server.pid), children: (await descendantsOf(server.pid)).length };
  } finally {
    await server.close();
  }
}

// The floor under any Node server: spawning `node -e ""` until it has exited.
async function bareNodeMs(): Promise<number> {
  const startedAt = performance.now();
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return performance.now() - startedAt;
}
