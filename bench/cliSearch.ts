// `loadout search` at 5,000 tools, as a user runs it: the large dev set's servers copied under new
// keys up to 5,000 tools, written as a config dir and a warm data dir (cached definitions), then
// the built CLI run once cold (nothing of the index saved yet) and then warm, each run's wall
// time, CPU time and peak memory (max RSS) read from the child itself as it exits. Then a gateway
// started warm on the same dirs (`loadout serve`, the index saved) and its first discover-all-tools
// search: that call's time, and the gateway's CPU time and peak memory (VmHWM) once it answered.
//
//   node dist/bench/cliSearch.js [DIR]   keeps the setup in DIR (to try queries by hand) when given
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { writeDefinitionCache, type CachedServerTools } from '../src/catalog/index.js';
import { resolvePaths } from '../src/config/index.js';
import { CLI, ECHO_FIXTURE } from './catalogFixture.js';
import { cpuTimeMs, peakRssBytes, spawnLoadout } from './processes.js';
import { loadLargeDevSet } from './searchDevLarge.js';
import { percentile } from './stats.js';

const CLI_TOOLS = 5_000;
const WARM_RUNS = 3;
const TARGETS = { wallMs: 500, rssMb: 120 };
// Printed by the child as it exits: its own CPU time and peak RSS, free of the parent's.
const REPORT_USAGE =
  'data:text/javascript,import{writeSync}from"node:fs";process.on("exit",()=>{const u=process.resourceUsage();writeSync(2,"\\nUSAGE "+JSON.stringify({cpuMs:(u.userCPUTime+u.systemCPUTime)/1000,rssKb:u.maxRSS})+"\\n")})';

/** One CLI run's cost. */
interface RunCost {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
}

/** A config dir and a warm data dir over the large set copied up to `count` tools; returns the CLI's dir arguments. */
async function writeSetup(root: string, count: number): Promise<string[]> {
  const paths = resolvePaths({ configDir: path.join(root, 'config'), dataDir: path.join(root, 'data') });
  await mkdir(paths.configDir, { recursive: true });
  await mkdir(paths.dataDir, { recursive: true });
  const { servers } = loadLargeDevSet();
  const config: Record<string, unknown> = {};
  const cache: Record<string, CachedServerTools> = {};
  let tools = 0;
  for (let copy = 0; tools < count; copy++) {
    for (const [name, server] of Object.entries(servers)) {
      if (tools >= count) break;
      const key = copy === 0 ? name : `${name}-c${copy}`;
      const kept = server.tools.slice(0, count - tools);
      tools += kept.length;
      // Never started (the definitions are cached), but a real command, so a stray start still works.
      config[key] = { command: process.execPath, args: [ECHO_FIXTURE] };
      cache[key] = { discoveredAt: 'bench', tools: kept, ...(server.about ? { about: server.about } : {}) };
    }
  }
  await writeFile(paths.serversFile, stringify({ servers: config }));
  await writeDefinitionCache(paths.catalogCacheFile, cache);
  return ['--config', paths.configDir, '--data', paths.dataDir];
}

function runSearch(dirArgs: string[], query: string): RunCost {
  const start = performance.now();
  const run = spawnSync(process.execPath, ['--import', REPORT_USAGE, CLI, 'search', ...dirArgs, '--', ...query.split(' ')], {
    encoding: 'utf8',
  });
  const wallMs = performance.now() - start;
  const usage = /USAGE (\{.*\})/.exec(run.stderr);
  if (run.status !== 0 || !usage) throw new Error(`loadout search failed (${run.status}): ${run.stderr}`);
  const { cpuMs, rssKb } = JSON.parse(usage[1]!) as { cpuMs: number; rssKb: number };
  return { wallMs, cpuMs, rssMb: rssKb / 1024 };
}

/** A gateway started warm on `dirArgs`: its first search's time, and its CPU time and peak RSS once that answered. */
async function gatewayFirstSearch(dirArgs: string[], query: string): Promise<RunCost> {
  const gateway = await spawnLoadout(dirArgs);
  try {
    const start = performance.now();
    const result = await gateway.client.callTool({ name: 'discover-all-tools', arguments: { query, limit: 10 } });
    const wallMs = performance.now() - start;
    if (result.isError) throw new Error(`discover-all-tools failed: ${JSON.stringify(result.content)}\n${gateway.stderr()}`);
    return { wallMs, cpuMs: await cpuTimeMs(gateway.pid), rssMb: (await peakRssBytes(gateway.pid)) / 1024 / 1024 };
  } finally {
    await gateway.close();
  }
}

const costText = ({ wallMs, cpuMs, rssMb }: RunCost) =>
  `wall ${wallMs.toFixed(0)} ms, CPU ${cpuMs.toFixed(0)} ms, max RSS ${rssMb.toFixed(0)} MB`;

/** The median of each figure of `runs`, against the targets. */
function typicalText(runs: readonly RunCost[]): string {
  const median = (pick: (cost: RunCost) => number) => percentile(runs.map(pick), 50);
  const typical = { wallMs: median((run) => run.wallMs), cpuMs: median((run) => run.cpuMs), rssMb: median((run) => run.rssMb) };
  const met = typical.wallMs <= TARGETS.wallMs && typical.rssMb <= TARGETS.rssMb;
  return `${costText(typical)} — targets ≤ ${TARGETS.wallMs} ms, ≤ ${TARGETS.rssMb} MB: ${met ? 'met' : 'not met'}`;
}

/** The bench's rows for `loadout search` at 5,000 tools; `keepIn` keeps the setup there. */
export async function cliSearchRows(keepIn?: string): Promise<string[]> {
  const root = keepIn ?? (await mkdtemp(path.join(tmpdir(), 'loadout-bench-cli-search-')));
  try {
    const dirArgs = await writeSetup(root, CLI_TOOLS);
    const first = runSearch(dirArgs, 'list tables in a mysql database');
    const warm = ['save memory of user preference', 'create an issue on github', 'send a message to a channel'].slice(0, WARM_RUNS);
    const runs = warm.map((query) => runSearch(dirArgs, query));
    const gateways: RunCost[] = [];
    for (const query of warm) gateways.push(await gatewayFirstSearch(dirArgs, query));
    return [
      `loadout search on the command line, ${CLI_TOOLS} tools (the large dev set's servers copied under new keys), warm data dir; load average ${loadavg()
        .map((load) => load.toFixed(1))
        .join(' ')}`,
      `  first run: ${costText(first)}`,
      `  later runs (median of ${runs.length}): ${typicalText(runs)}`,
      `  a gateway's first search after a warm start (median of ${gateways.length}; wall is the call, CPU the gateway's since it started): ${typicalText(gateways)}`,
    ];
  } finally {
    if (!keepIn) await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log((await cliSearchRows(process.argv[2])).join('\n'));
