// `npm run check:real`: real MCP servers from npm, each listed by a client connected to it
// directly and through `loadout serve --equip all`, cold (empty data dir) and then warm (the
// catalog cached, the server not started). Prints one row per server: the counts of tools,
// prompts, resources and templates (direct/cold/warm), whether every definition is
// byte-identical, and why not. Exits 1 if any server differs, 2 if the check itself cannot run.
//   npm run check:real -- [--server NAME]… [--dir DIR] [--timeout SECONDS] [--repeat N] [--roots] [--keep] [--json FILE]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { CLIENT_CAPABILITIES } from '../../src/downstream/index.js';
import { KEY_FIELD, LIST_KINDS, compareList, flattenedName, type ListKind } from './compare.js';
import { ensureInstalled, resolveServer, type ResolvedServer } from './install.js';
import { LIST_METHODS, type RawClient } from './rawClient.js';
import { REAL_SERVERS, type RealServer, type ServerContext } from './servers.js';
import { listDirect, listThroughLoadout, type SideResult } from './sides.js';

// This file runs from dist/scripts/real-servers/.
const root = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const sourceDir = path.join(root, 'scripts', 'real-servers');
// LOADOUT_CLI runs another build (say, main's) against the same servers.
const cli = process.env.LOADOUT_CLI ?? path.join(root, 'dist', 'bundle', 'loadout.js');

/** One server's row and the details behind it. */
interface ServerReport {
  name: string;
  package: string;
  sdk: string;
  /** Per list: direct, then each loadout run: a count, `err` or `-` (not declared). */
  counts: Record<ListKind, string[]>;
  /** Milliseconds from spawn to the first tools/list answered: direct, then each loadout run. */
  toolsMs: number[];
  identical: boolean;
  problems: string[];
  notes: string[];
  seconds: number;
}

const options = (() => {
  try {
    return parseArgs({
      options: {
        server: { type: 'string', multiple: true },
        dir: { type: 'string' },
        timeout: { type: 'string', default: '180' },
        repeat: { type: 'string', default: '1' },
        json: { type: 'string' },
        roots: { type: 'boolean', default: false },
        keep: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
})();
// The direct client declares what loadout declares to its servers, so that a server whose tool
// set depends on the client's capabilities (server-everything) offers both sides the same set.
// loadout declares no roots on purpose (a shared server cannot be told whose they are); --roots
// declares them directly anyway, to show what a client with roots sees that loadout does not.
const ROOTS = { roots: { listChanged: true } };
const directCapabilities = { ...CLIENT_CAPABILITIES, ...(options.roots ? ROOTS : {}) };
// Towards loadout the check is a client like Claude Code: sampling, elicitation and roots.
const clientCapabilities = { ...CLIENT_CAPABILITIES, ...ROOTS };
const scratchDir = path.resolve(options.dir ?? process.env.LOADOUT_REAL_SERVERS_DIR ?? path.join(tmpdir(), 'loadout-real-servers'));
const timeoutMs = Number(options.timeout) * 1000;
const repeat = Number(options.repeat);
if (!(timeoutMs > 0) || !Number.isInteger(repeat) || repeat < 1) fail('--timeout takes seconds above 0 and --repeat a whole number from 1');
if (!existsSync(cli)) fail(`${cli} is missing; run \`npm run build\` first`);
const unknown = (options.server ?? []).filter((name) => !REAL_SERVERS.some((server) => server.name === name));
if (unknown.length) fail(`unknown server ${unknown.join(', ')}; servers: ${REAL_SERVERS.map((server) => server.name).join(', ')}`);
const selected = options.server ? REAL_SERVERS.filter((server) => options.server!.includes(server.name)) : REAL_SERVERS;

try {
  const installed = ensureInstalled(sourceDir, scratchDir);
  console.error(`real servers: ${installed} in ${scratchDir}`);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

const reports: ServerReport[] = [];
for (const server of selected) {
  const report = await checkServer(server).catch((error: unknown) => failedReport(server, error));
  console.error(
    `${report.identical ? 'ok  ' : 'DIFF'} ${report.name} (${report.seconds.toFixed(1)} s)${report.identical ? '' : `: ${report.problems[0]}`}`,
  );
  reports.push(report);
}
printReport(reports);
if (options.json) writeFileSync(options.json, `${JSON.stringify(reports, null, 2)}\n`);
process.exit(reports.every((report) => report.identical) ? 0 : 1);

async function checkServer(server: RealServer): Promise<ServerReport> {
  const startedAt = performance.now();
  const report = emptyReport(server);
  const { counts } = report;
  let resolved: ResolvedServer;
  try {
    resolved = resolveServer(scratchDir, server);
  } catch (error) {
    report.problems.push(error instanceof Error ? error.message : String(error));
    return report;
  }
  report.package = `${server.package}@${resolved.version}`;
  report.sdk = resolved.sdk;
  const home = mkdtempSync(path.join(tmpdir(), `loadout-real-${server.name}-`));
  const open = new Set<RawClient>();
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    for (const client of open) void client.close();
  }, timeoutMs);
  const track = (client: RawClient) => open.add(client);
  try {
    const context: ServerContext = { workspace: path.join(home, 'workspace'), home: path.join(home, 'home') };
    mkdirSync(context.workspace);
    mkdirSync(path.join(context.home, 'tmp'), { recursive: true });
    // The same environment on both sides: loadout's children inherit loadout's, plus the server's own.
    const baseEnv: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: context.home, TMPDIR: path.join(context.home, 'tmp') };
    const serverArgs = [resolved.entry, ...(server.args?.(context) ?? [])];
    const serverEnv = server.env?.(context) ?? {};
    const requestTimeoutMs = Math.min(60_000, timeoutMs);
    const direct = await listDirect(
      {
        command: process.execPath,
        args: serverArgs,
        env: { ...baseEnv, ...serverEnv },
        cwd: context.workspace,
        capabilities: directCapabilities,
        root: context.workspace,
        requestTimeoutMs,
      },
      track,
    );
    report.notes.push(...direct.notes);
    report.toolsMs.push(Math.round(direct.toolsMs ?? NaN));
    if (direct.failure) {
      report.problems.push(`direct: ${direct.failure}`);
      return report;
    }
    for (const kind of LIST_KINDS) {
      const outcome = direct.lists[kind];
      counts[kind].push(outcome === undefined ? '-' : outcome.ok ? String(outcome.items.length) : 'err');
      if (outcome && !outcome.ok) report.notes.push(`direct ${LIST_METHODS[kind]}: ${outcome.error}`);
    }
    const configDir = path.join(home, 'config');
    mkdirSync(configDir);
    const servers = { [server.name]: { command: process.execPath, args: serverArgs, env: serverEnv, cwd: context.workspace } };
    writeFileSync(path.join(configDir, 'servers.yaml'), stringify({ servers }));
    for (let round = 1; round <= repeat; round++) {
      // A fresh data dir per round: its first start is cold, its second warm.
      const dataDir = path.join(home, `data-${round}`);
      mkdirSync(dataDir);
      for (const phase of ['cold', 'warm']) {
        const label = repeat > 1 ? `${phase}#${round}` : phase;
        const loadout = await listThroughLoadout(
          server.name,
          {
            command: process.execPath,
            args: [cli, 'serve', '--equip', 'all', '--config', configDir, '--data', dataDir, '--log-level', 'warn'],
            env: baseEnv,
            capabilities: clientCapabilities,
            root: context.workspace,
            requestTimeoutMs,
          },
          track,
        );
        report.notes.push(...loadout.notes.map((note) => `${label}: ${note}`));
        if (round === 1) for (const kind of LIST_KINDS) counts[kind].push(countOf(loadout, kind));
        report.toolsMs.push(Math.round(loadout.toolsMs ?? NaN));
        report.problems.push(...compareSides(server.name, direct, loadout).map((problem) => `${label} ${problem}`));
      }
    }
  } finally {
    clearTimeout(deadline);
    if (timedOut) report.problems.unshift(`timed out after ${timeoutMs / 1000} s`);
    await Promise.all([...open].map((client) => client.close()));
    if (options.keep) report.notes.push(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
    report.seconds = (performance.now() - startedAt) / 1000;
  }
  report.identical = report.problems.length === 0;
  return report;
}

/** The differences between the direct side and one loadout run, per list. */
function compareSides(server: string, direct: SideResult, loadout: SideResult): string[] {
  if (loadout.failure) return [loadout.failure];
  const problems: string[] = [];
  for (const kind of LIST_KINDS) {
    const expected = direct.lists[kind];
    const actual = loadout.lists[kind];
    const expectedItems = expected?.ok ? expected.items : [];
    if (!actual) continue;
    if (!actual.ok) {
      // A list the server itself fails is no difference when loadout fails it too.
      if (expected && !expected.ok) continue;
      problems.push(`${LIST_METHODS[kind]} failed: ${actual.error}`);
      continue;
    }
    const exposedKey = (item: Record<string, unknown>): string | undefined => {
      const key = item[KEY_FIELD[kind]];
      if (typeof key !== 'string') return undefined;
      if (kind === 'tools') return loadout.toolNames?.get(key);
      return kind === 'prompts' ? flattenedName(server, key) : key;
    };
    problems.push(...compareList(kind, expectedItems, actual.items, exposedKey).map((problem) => `${kind}: ${problem}`));
  }
  return problems;
}

// A check that broke (a temp dir it could not make, say) still gets its row.
function failedReport(server: RealServer, error: unknown): ServerReport {
  const report = emptyReport(server);
  report.problems.push(`the check failed: ${error instanceof Error ? error.message : String(error)}`);
  return report;
}

function emptyReport(server: RealServer): ServerReport {
  const counts = Object.fromEntries(LIST_KINDS.map((kind) => [kind, [] as string[]])) as Record<ListKind, string[]>;
  return {
    name: server.name,
    package: server.package,
    sdk: '?',
    counts,
    toolsMs: [],
    identical: false,
    problems: [],
    notes: [],
    seconds: 0,
  };
}

function countOf(side: SideResult, kind: ListKind): string {
  const outcome = side.lists[kind];
  return outcome === undefined ? '-' : outcome.ok ? String(outcome.items.length) : 'err';
}

function printReport(rows: readonly ServerReport[]): void {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const lines = [
    '| server | package | SDK | tools | prompts | resources | templates | ms to tools | identical | reason |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of rows) {
    const reason = row.problems.length
      ? `${row.problems[0]!.slice(0, 140)}${row.problems.length > 1 ? ` (+${row.problems.length - 1} more)` : ''}`
      : '';
    const counts = LIST_KINDS.map((kind) => row.counts[kind].join('/') || '?');
    const ms = row.toolsMs
      .slice(0, 3)
      .map((value) => (Number.isNaN(value) ? '?' : String(value)))
      .join('/');
    lines.push(`| ${[row.name, row.package, row.sdk, ...counts, ms, row.identical ? 'yes' : 'NO', reason].map(cell).join(' | ')} |`);
  }
  console.log('Counts and ms (spawn to first tools/list): direct/loadout cold/loadout warm; `-` not declared, `err` the list failed.\n');
  console.log(lines.join('\n'));
  const detailed = rows.filter((row) => row.problems.length || row.notes.length);
  if (detailed.length) console.log('\nDetails:');
  for (const row of detailed) {
    console.log(`- ${row.name}:`);
    for (const problem of row.problems) console.log(`  - ${problem}`);
    for (const note of row.notes) console.log(`  - (note) ${note}`);
  }
  const identical = rows.filter((row) => row.identical).length;
  const total = (kind: ListKind) => rows.reduce((sum, row) => sum + (Number(row.counts[kind][0]) || 0), 0);
  console.log(
    `\nreal servers: ${identical}/${rows.length} identical through loadout; direct totals: ${total('tools')} tools, ${total('prompts')} prompts, ${total('resources')} resources, ${total('resourceTemplates')} templates`,
  );
}

function fail(message: string): never {
  console.error(`check:real: ${message}`);
  process.exit(2);
}
