// Row 11: what the sandbox costs. The same echo fixture behind one loadout three times: without a
// sandbox, and twice with `sandbox: true`. The first sandboxed start of a gateway also starts the
// sandbox runtime (its module, its proxy); the second finds it running. Each cold first call
// (spawn + handshake + call) is set against the unsandboxed start in the same gateway, whose place
// in the order alternates per repeat; then warm calls to both, which the sandbox should not change.
import { createSetup, ECHO_FIXTURE } from './catalogFixture.js';
import { spawnLoadout } from './processes.js';
import type { BenchRow } from './report.js';
import type { BenchContext } from './scale.js';
import { formatMs, ratio, summarize, timeMs, type Summary } from './stats.js';

const EXTRA_START_TARGET_MS = 150;
const WARM_CALLS = 50;
type Server = 'plain' | 'boxed' | 'again';

/** Rows 11a (first sandboxed start), 11b (a later one) and 11c (warm call), against the unsandboxed server. */
export async function benchSandboxStart(context: BenchContext): Promise<BenchRow[]> {
  const tools = context.echoTools;
  const setup = await createSetup({
    servers: 0,
    toolsPerServer: 0,
    cached: {
      plain: { args: [ECHO_FIXTURE], tools },
      boxed: { args: [ECHO_FIXTURE], tools, sandbox: true },
      again: { args: [ECHO_FIXTURE], tools, sandbox: true },
    },
    toolsets: { trio: ['plain.echo', 'boxed.echo', 'again.echo'] },
  });
  const first: Record<Server, number[]> = { plain: [], boxed: [], again: [] };
  const warm: Record<Server, number[]> = { plain: [], boxed: [], again: [] };
  try {
    for (let repeat = 0; repeat < context.scale.startRepeats; repeat++) {
      const gateway = await spawnLoadout(setup.args, ['--equip', 'trio']);
      try {
        const call = (server: Server) => gateway.client.callTool({ name: `${server}_echo`, arguments: { text: 'hi' } });
        const order: Server[] = [
          ['plain', 'boxed', 'again'],
          ['boxed', 'plain', 'again'],
          ['boxed', 'again', 'plain'],
        ][repeat % 3] as Server[];
        for (const server of order) first[server].push(await timeMs(() => call(server)));
        for (let index = 0; index < WARM_CALLS; index++)
          for (const server of ['plain', 'boxed'] as const) warm[server].push(await timeMs(() => call(server)));
      } finally {
        await gateway.close();
      }
    }
  } finally {
    await setup.cleanup();
  }
  const plain = summarize(first.plain);
  const startRow = (id: string, figure: string, boxed: Summary): BenchRow => {
    const extra = boxed.p50 - plain.p50;
    return {
      id,
      figure,
      loadout: `${formatMs(boxed.p50)} (p99 ${formatMs(boxed.p99)}; +${formatMs(extra)})`,
      limit: `unsandboxed ${formatMs(plain.p50)}`,
      ratio: ratio(boxed.p50, plain.p50),
      target: `≤ +${EXTRA_START_TARGET_MS} ms`,
      pass: extra <= EXTRA_START_TARGET_MS,
      values: { sandboxedP50Ms: boxed.p50, sandboxedP99Ms: boxed.p99, unsandboxedP50Ms: plain.p50, extraP50Ms: extra },
    };
  };
  const [boxedWarm, plainWarm] = [summarize(warm.boxed), summarize(warm.plain)];
  return [
    startRow('11a', "cold first call to a lazy sandboxed server, the gateway's first (starts the sandbox runtime)", summarize(first.boxed)),
    startRow('11b', 'cold first call to a lazy sandboxed server, the sandbox runtime running', summarize(first.again)),
    {
      id: '11c',
      figure: `warm call to a sandboxed server (${WARM_CALLS} per start)`,
      loadout: `${formatMs(boxedWarm.p50)} (p99 ${formatMs(boxedWarm.p99)})`,
      limit: `unsandboxed ${formatMs(plainWarm.p50)}`,
      ratio: ratio(boxedWarm.p50, plainWarm.p50),
      target: '— (unchanged)',
      values: { sandboxedP50Ms: boxedWarm.p50, sandboxedP99Ms: boxedWarm.p99, unsandboxedP50Ms: plainWarm.p50 },
    },
  ];
}
