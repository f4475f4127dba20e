// `npm run bench`: measures loadout against its performance targets (docs/performance.md), each
// figure next to its physical limit
// measured in the same run. No network; temp dirs only. `--json` for machines, `--quick` for a
// smoke run at tiny counts (numbers then mean nothing).
import { ECHO_FIXTURE } from './catalogFixture.js';
import { benchAuditCost } from './auditCost.js';
import { benchContextSize } from './contextSize.js';
import { benchEquipAndSearch } from './equipSearch.js';
import { benchForwarding } from './forwarding.js';
import { benchHttpEras } from './httpEras.js';
import { benchIdentityCost } from './identityCost.js';
import { benchMemory } from './memory.js';
import { spawnMcp } from './processes.js';
import { formatJson, formatTable, machineInfo, type BenchRow } from './report.js';
import { FULL_SCALE, QUICK_SCALE, type BenchContext } from './scale.js';
import { benchSandboxStart } from './sandboxStart.js';
import { benchColdFirstCall, benchWarmStart } from './startup.js';
import { benchTelemetry } from './telemetry.js';

/** The bench's sections, in the order of their row numbers (1 forwarding … 7 memory, 8 telemetry, 11 sandbox). */
export const SECTIONS: Record<string, (context: BenchContext) => Promise<BenchRow[]>> = {
  forwarding: benchForwarding,
  'http-eras': benchHttpEras,
  identity: benchIdentityCost,
  audit: benchAuditCost,
  'warm-start': benchWarmStart,
  'cold-call': benchColdFirstCall,
  'equip-search': benchEquipAndSearch,
  'context-size': benchContextSize,
  memory: benchMemory,
  telemetry: benchTelemetry,
  sandbox: benchSandboxStart,
};

/** Options of one run. */
export interface BenchOptions {
  quick: boolean;
  /** Run only these sections (default: all). */
  only?: string[];
  /** Hears each section's name as it starts. */
  onSection?: (name: string) => void;
}

/** Run the bench and return its rows. */
export async function runBench(options: BenchOptions): Promise<BenchRow[]> {
  const context: BenchContext = { scale: options.quick ? QUICK_SCALE : FULL_SCALE, echoTools: await listEchoTools() };
  const rows: BenchRow[] = [];
  for (const [name, section] of Object.entries(SECTIONS)) {
    if (options.only && !options.only.includes(name)) continue;
    options.onSection?.(name);
    rows.push(...(await section(context)));
  }
  return rows;
}

// The echo fixture's real definitions, so cached setups list exactly what it serves.
async function listEchoTools(): Promise<BenchContext['echoTools']> {
  const echo = await spawnMcp(process.execPath, [ECHO_FIXTURE]);
  try {
    return (await echo.client.listTools()).tools;
  } finally {
    await echo.close();
  }
}

/** A wrong command line: reported as one line, without a stack. */
class UsageError extends Error {}

function parseArguments(argv: string[]): BenchOptions & { json: boolean } {
  const unknown = argv.filter((arg) => !['--json', '--quick'].includes(arg) && !arg.startsWith('--only='));
  if (unknown.length)
    throw new UsageError(
      `unknown argument ${unknown.join(' ')}; usage: npm run bench -- [--json] [--quick] [--only=${Object.keys(SECTIONS).join(',')}]`,
    );
  const only = argv
    .find((arg) => arg.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  for (const name of only ?? [])
    if (!SECTIONS[name]) throw new UsageError(`unknown section '${name}'; sections: ${Object.keys(SECTIONS).join(', ')}`);
  return { json: argv.includes('--json'), quick: argv.includes('--quick'), only };
}

async function main(): Promise<void> {
  const options = parseArguments(process.argv.slice(2));
  const startedAt = performance.now();
  const rows = await runBench({ ...options, onSection: (name) => process.stderr.write(`bench: ${name}…\n`) });
  const elapsed = performance.now() - startedAt;
  const machine = machineInfo();
  process.stdout.write(`${options.json ? formatJson(rows, machine, elapsed, options.quick) : formatTable(rows, machine, elapsed)}\n`);
}

// Run only as the entry script, so the test can import runBench without starting a run.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((error: unknown) => {
    const text = error instanceof UsageError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`bench: ${text}\n`);
    process.exitCode = 1;
  });
}
