// `npm run conformance`: runs the server scenarios of the MCP conformance suite against loadout (the
// built bundle, `npm run build` first) serving streamable HTTP with every tool equipped, in front of
// server-everything and of test/fixtures/contentServer.ts configured as server `test`: the suite
// calls fixed names (`test_simple_prompt`, `test://static-text`, …), which that fixture provides
// through loadout's flattened naming (`test` + `_simple_prompt`). Three sets, each against its own
// loadout process:
//   legacy      @modelcontextprotocol/conformance 0.1.x, every server scenario (2025 era, sessions)
//   2025-11-25  the 0.2 alpha suite's requirement set for 2025-11-25 (2025 era)
//   2026-07-28  the 0.2 alpha suite's requirement set for 2026-07-28 (stateless, per-request _meta),
//               with the fixture in both eras (--modern), so loadout speaks 2026-07-28 to it too
// A set's expected failures are in expected-failures.<set>.yml (the suite's baseline format:
// `scenario` or `scenario:check-id`, each with a comment saying why). Everything lives in a temp dir
// (config, data, HOME); nothing leaves loopback. Prints the suite's report, then one line per
// scenario and a summary per set; exits non-zero on a failure outside the baseline, or on a
// baseline entry that passes (stale).
//   node scripts/conformance/run.mjs [--set legacy|2025-11-25|2026-07-28 …] [--scenario NAME] [--json FILE]
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

const root = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const here = path.join(root, 'scripts', 'conformance');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const suiteOf = (pkg) => path.join(root, 'node_modules', '@modelcontextprotocol', pkg, 'dist', 'index.js');
const shim = path.join(here, 'nodeShim.mjs');
// LOADOUT_CLI runs another build (say, main's) against the same servers, for a before/after comparison.
const cli = process.env.LOADOUT_CLI ?? path.join(root, 'dist', 'bundle', 'loadout.js');
const contentServer = path.join(root, 'dist', 'test', 'fixtures', 'contentServer.js');

/** The sets: which suite, its arguments, and how the content fixture runs. */
const SETS = {
  legacy: { pkg: 'conformance', suiteArgs: [], fixtureArgs: [] },
  '2025-11-25': { pkg: 'conformance-2026', suiteArgs: ['--requirements', '2025-11-25'], fixtureArgs: [] },
  '2026-07-28': { pkg: 'conformance-2026', suiteArgs: ['--requirements', '2026-07-28'], fixtureArgs: ['--modern'] },
};

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
};
const chosen = args.flatMap((arg, index) => (args[index - 1] === '--set' ? [arg] : []));
const sets = chosen.length ? chosen : Object.keys(SETS);
for (const set of sets) {
  if (!SETS[set]) {
    console.error(`conformance: unknown set '${set}'; sets: ${Object.keys(SETS).join(', ')}`);
    process.exit(2);
  }
}
if (!existsSync(cli)) {
  console.error('conformance: dist/bundle/loadout.js is missing; run `npm run build` first');
  process.exit(2);
}

/** Baseline entries of a set: scenario → '*' (the whole scenario) or the set of check ids. */
function baselineOf(set) {
  const file = path.join(here, `expected-failures.${set}.yml`);
  const entries = existsSync(file) ? (parseYaml(readFileSync(file, 'utf8'))?.server ?? []) : [];
  const baseline = new Map();
  for (const entry of entries) {
    const [scenario, check] = String(entry).split(':');
    if (!check) baseline.set(scenario, '*');
    else baseline.set(scenario, new Set([...(baseline.get(scenario) ?? []), check]));
  }
  return { file: existsSync(file) ? file : undefined, baseline };
}

/** Start loadout in front of the two servers; resolves with its URL and process. */
async function startGateway(temp, fixtureArgs) {
  const configDir = path.join(temp, 'config');
  const dataDir = path.join(temp, 'data');
  mkdirSync(configDir);
  mkdirSync(dataDir);
  writeFileSync(
    path.join(configDir, 'servers.yaml'),
    [
      'servers:',
      '  everything:',
      `    command: ${JSON.stringify(bin('mcp-server-everything'))}`,
      '  test:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: ${JSON.stringify([contentServer, ...fixtureArgs])}`,
      '',
    ].join('\n'),
  );
  const gateway = spawn(
    process.execPath,
    [cli, 'serve', '--http', '--port', '0', '--equip', 'all', '--config', configDir, '--data', dataDir, '--log-level', 'warn'],
    { env: { ...process.env, HOME: temp }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk.toString('utf8');
      const match = /serving MCP at (\S+)/.exec(output);
      if (match) resolve(match[1]);
    };
    gateway.stdout.on('data', onData);
    gateway.stderr.on('data', onData);
    gateway.once('exit', (code) => reject(new Error(`loadout exited with ${code} before listening:\n${output}`)));
  });
  return { url, gateway };
}

// Each scenario writes <outputDir>/<scenario>…/checks.json. Its failed checks are those with FAILURE
// or WARNING (a SHOULD not met), as the suite's own baseline check counts them.
function readResults(outputDir) {
  const results = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name === 'checks.json') {
        const checks = JSON.parse(readFileSync(full, 'utf8'));
        results.push({
          scenario: path
            .relative(outputDir, dir)
            .split(path.sep)[0]
            .replace(/^server-/, '')
            .replace(/-\d{4}-\d{2}-\d{2}T.*$/, ''),
          failed: checks
            .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
            .map((check) => ({ id: check.id, message: `${check.status === 'WARNING' ? '(SHOULD) ' : ''}${check.errorMessage ?? ''}` })),
        });
      }
    }
  };
  if (existsSync(outputDir)) walk(outputDir);
  return results.sort((a, b) => a.scenario.localeCompare(b.scenario));
}

async function runSet(set) {
  const { pkg, suiteArgs, fixtureArgs } = SETS[set];
  const temp = mkdtempSync(path.join(tmpdir(), 'loadout-conformance-'));
  const { url, gateway } = await startGateway(temp, fixtureArgs);
  const { file, baseline } = baselineOf(set);
  const outputDir = path.join(temp, 'results');
  const argv = ['--import', shim, suiteOf(pkg), 'server', '--url', url, '--output-dir', outputDir];
  const scenario = option('--scenario');
  // --requirements fixes the scenarios; a single scenario then runs at the set's wire version.
  if (scenario) argv.push('--scenario', scenario, ...(pkg === 'conformance' ? [] : ['--spec-version', set]));
  else argv.push(...suiteArgs);
  if (file && !scenario) argv.push('--expected-failures', file);
  const startedAt = Date.now();
  console.log(`\n### conformance set ${set} (${pkg})`);
  await new Promise((resolve) => {
    const run = spawn(process.execPath, argv, { stdio: 'inherit', env: { ...process.env, HOME: temp } });
    run.once('exit', resolve);
  });
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  gateway.kill('SIGTERM');
  await new Promise((resolve) => gateway.once('exit', resolve));

  const results = readResults(outputDir).map((result) => {
    const expected = baseline.get(result.scenario);
    const excused = (check) => expected === '*' || (expected instanceof Set && expected.has(check.id));
    return {
      ...result,
      ok: result.failed.length === 0,
      unexpected: result.failed.filter((check) => !excused(check)).map((check) => `${check.id}: ${check.message}`),
      expected: result.failed.filter(excused).map((check) => check.id),
    };
  });
  // A baseline entry whose scenario ran and passes that check is stale.
  const stale = [];
  for (const [name, expected] of baseline) {
    const result = results.find((r) => r.scenario === name);
    if (!result) continue;
    if (expected === '*' ? result.ok : [...expected].some((id) => !result.failed.some((check) => check.id === id))) stale.push(name);
  }
  for (const result of results) {
    const verdict = result.ok ? 'PASS' : result.unexpected.length ? 'FAIL' : 'EXPECTED';
    const detail = result.ok ? '' : `  (${result.unexpected.length ? result.unexpected.join('; ') : result.expected.join(', ')})`;
    console.log(`${verdict} ${set} ${result.scenario}${detail}`);
  }
  const unexpected = results.filter((result) => result.unexpected.length).length;
  console.log(
    `conformance ${set}: ${results.filter((r) => r.ok).length}/${results.length} scenarios pass in ${seconds} s; ` +
      `expected failures: ${results.filter((r) => !r.ok && !r.unexpected.length).length}; unexpected: ${unexpected}; stale baseline entries: ${stale.length ? stale.join(', ') : 0}`,
  );
  rmSync(temp, { recursive: true, force: true });
  return { set, seconds, results, stale, ok: results.length > 0 && unexpected === 0 && (scenario !== undefined || stale.length === 0) };
}

const reports = [];
for (const set of sets) reports.push(await runSet(set));
const jsonFile = option('--json');
if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ sets: reports }, null, 2));
process.exit(reports.every((report) => report.ok) ? 0 : 1);
