// `npm run conformance`: runs the server scenarios of @modelcontextprotocol/conformance against
// loadout (the built bundle, `npm run build` first) serving streamable HTTP with every tool
// equipped, in front of server-everything and of test/fixtures/contentServer.ts configured as
// server `test`: the suite calls fixed names (`test_simple_prompt`, `test://static-text`, …),
// which that fixture provides through loadout's flattened naming (`test` + `_simple_prompt`). Everything lives in a temp dir (config, data,
// HOME); nothing leaves loopback. Prints the suite's report, then one line per scenario and a
// PASS/FAIL summary; exits non-zero if a scenario outside KNOWN_FAILURES fails.
//   node scripts/conformance/run.mjs [--scenario NAME] [--json FILE]
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const suite = path.join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const shim = path.join(root, 'scripts', 'conformance', 'nodeShim.mjs');
// LOADOUT_CLI runs another build (say, main's) against the same servers, for a before/after comparison.
const cli = process.env.LOADOUT_CLI ?? path.join(root, 'dist', 'bundle', 'loadout.js');
const contentServer = path.join(root, 'dist', 'test', 'fixtures', 'contentServer.js');

/** Scenarios allowed to fail, by name, with the reason: none today. */
const KNOWN_FAILURES = new Map();

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
};

if (!existsSync(cli)) {
  console.error('conformance: dist/bundle/loadout.js is missing; run `npm run build` first');
  process.exit(2);
}

const temp = mkdtempSync(path.join(tmpdir(), 'loadout-conformance-'));
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
    `    args: [${JSON.stringify(contentServer)}]`,
    '',
  ].join('\n'),
);

const gateway = spawn(
  process.execPath,
  [cli, 'serve', '--http', '--port', '0', '--equip', 'all', '--config', configDir, '--data', dataDir, '--log-level', 'warn'],
  {
    env: { ...process.env, HOME: temp },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let gatewayOutput = '';
const url = await new Promise((resolve, reject) => {
  const onData = (chunk) => {
    gatewayOutput += chunk.toString('utf8');
    const match = /serving MCP at (\S+)/.exec(gatewayOutput);
    if (match) resolve(match[1]);
  };
  gateway.stdout.on('data', onData);
  gateway.stderr.on('data', onData);
  gateway.once('exit', (code) => reject(new Error(`loadout exited with ${code} before listening:\n${gatewayOutput}`)));
});

const outputDir = path.join(temp, 'results');
const suiteArgs = ['--import', shim, suite, 'server', '--url', url, '--output-dir', outputDir];
const scenario = option('--scenario');
if (scenario) suiteArgs.push('--scenario', scenario);
const startedAt = Date.now();
const exitCode = await new Promise((resolve) => {
  const run = spawn(process.execPath, suiteArgs, { stdio: 'inherit', env: { ...process.env, HOME: temp } });
  run.once('exit', (code) => resolve(code ?? 1));
});
const seconds = ((Date.now() - startedAt) / 1000).toFixed(0);

gateway.kill('SIGTERM');
await new Promise((resolve) => gateway.once('exit', resolve));

// Each scenario writes <outputDir>/<scenario>…/checks.json; a scenario passes when no check failed.
const results = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name === 'checks.json') {
      const checks = JSON.parse(readFileSync(full, 'utf8'));
      const failed = checks.filter((check) => check.status === 'FAILURE');
      results.push({
        scenario: path
          .relative(outputDir, dir)
          .split(path.sep)[0]
          .replace(/-\d{4}-\d{2}-\d{2}T.*$/, ''),
        ok: failed.length === 0,
        failed: failed.map((check) => `${check.id}: ${check.errorMessage ?? ''}`),
      });
    }
  }
};
if (existsSync(outputDir)) walk(outputDir);
results.sort((a, b) => a.scenario.localeCompare(b.scenario));
for (const result of results)
  console.log(`${result.ok ? 'PASS' : 'FAIL'} ${result.scenario}${result.ok ? '' : `  (${result.failed.join('; ')})`}`);
const unexpected = results.filter((result) => !result.ok && !KNOWN_FAILURES.has(result.scenario));
console.log(
  `conformance: ${results.filter((r) => r.ok).length}/${results.length} scenarios pass in ${seconds} s; unexpected failures: ${unexpected.length}`,
);
const jsonFile = option('--json');
if (jsonFile) writeFileSync(jsonFile, JSON.stringify({ seconds: Number(seconds), results }, null, 2));
rmSync(temp, { recursive: true, force: true });
process.exit(unexpected.length ? 1 : exitCode === 0 || results.length ? 0 : 1);
