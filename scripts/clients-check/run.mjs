// `npm run check:clients`: runs the real Codex CLI (`codex exec`) and Gemini CLI (`gemini -p`)
// offline against loadout (stdio) and a scripted model on loopback (fakeModelApis.mjs), and reports
// what each client does with loadout: whether every meta-tool call runs (no approval failure, no
// argument refusal), whether it re-reads tools/list after an equip, whether the equipped tool is
// offered to the model on the turn right after the equip, and whether the downstream tool answers,
// natively or through call-tool. Each client runs with its default settings and with its
// list-change setting on. loadout runs inside ../claude-code-check/stdioTee.mjs, which logs each
// JSON-RPC message with its time. Opt-in, not in CI: the CLIs are large and are not dependencies of
// loadout. They are installed once from npm into a scratch folder, from this folder's own
// package.json and lockfile; after that everything stays on loopback.
//   node scripts/clients-check/run.mjs [--dir SCRATCH] [--only codex|gemini] [--log FILE]
// LOADOUT_CLI runs another build (say, main's) for a before/after comparison.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeModelApis } from './fakeModelApis.mjs';
import { installFromLockfile, readTraffic, runAgent } from '../claude-code-check/agentRuns.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const cli = process.env.LOADOUT_CLI ? path.resolve(process.env.LOADOUT_CLI) : path.join(root, 'dist', 'bundle', 'loadout.js');
const echoServer = path.join(root, 'dist', 'test', 'fixtures', 'echo.js');
const tee = path.join(root, 'scripts', 'claude-code-check', 'stdioTee.mjs');
const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
};
for (const file of [cli, echoServer]) {
  if (!existsSync(file)) {
    console.error(`clients-check: ${path.relative(root, file)} is missing; run \`npm run build\` first`);
    process.exit(2);
  }
}
const bin = installFromLockfile(
  here,
  option('--dir') ?? path.join(tmpdir(), 'loadout-clients-check'),
  ['codex', 'gemini'],
  'Codex CLI and Gemini CLI',
);
const SAID = 'through loadout';

// The scripted model: discover, build and equip a toolset holding echo.echo, then call the equipped
// tool where it is offered, else echo.echo through call-tool, then finish. Like a real model it
// calls only tools it is offered; names are matched however the client spells them.
const base = (name) => name.replace(/^.*?(?:mcp__loadout\.|mcp_loadout_)/, '').replaceAll('-', '_');
// Where the client adds `wait_for_previous` to every schema (Gemini CLI), the model sends it, as
// Gemini 3 models are told they must.
function decide({ tools, results, declarations }) {
  const offered = (wanted) => tools.find((name) => base(name) === wanted);
  const did = (wanted) => results.some((result) => base(result.name) === wanted);
  const injected = JSON.stringify(declarations ?? []).includes('"wait_for_previous"') ? { wait_for_previous: true } : {};
  const call = (wanted, callArguments) =>
    offered(wanted)
      ? { call: { name: offered(wanted), arguments: { ...callArguments, ...injected } } }
      : { text: `${wanted} is not in my tools.` };
  if (!offered('discover_all_tools')) return { text: 'ok' };
  if (did('echo_echo') || did('call_tool')) return { text: 'Done.' };
  if (did('build_toolset'))
    return offered('echo_echo') ? call('echo_echo', { text: SAID }) : call('call_tool', { tool: 'echo.echo', arguments: { text: SAID } });
  if (did('discover_all_tools')) return call('build_toolset', { name: 'echoes', tools: ['echo.echo'], equip: true });
  return call('discover_all_tools', { query: 'echo text' });
}

const CLIENTS = {
  codex: {
    title: 'Codex CLI',
    version: () => spawnSync(bin('codex'), ['--version'], { encoding: 'utf8' }).stdout.trim(),
    scenarios: [
      { title: 'default settings', flags: [], toml: '' },
      {
        title: 'list-change feature on ([features] mcp_tool_list_changed = true)',
        flags: [],
        toml: '[features]\nmcp_tool_list_changed = true\n',
      },
      { title: 'default_tools_approval_mode = "approve"', flags: [], toml: 'default_tools_approval_mode = "approve"\n' },
    ],
    runScenario: runCodex,
  },
  gemini: {
    title: 'Gemini CLI',
    version: () => spawnSync(bin('gemini'), ['--version'], { encoding: 'utf8' }).stdout.trim(),
    // Gemini CLI re-reads on list_changed by default and has no setting for it; the second run
    // turns loadout's hold off, to show what the hold buys.
    scenarios: [
      { title: 'default settings', yaml: '' },
      { title: 'loadout hold off (relist_wait_ms: 0)', yaml: 'gateway:\n  relist_wait_ms: 0\n' },
    ],
    runScenario: runGemini,
  },
};

const only = option('--only');
const logFile = option('--log');
const recorded = {};
let allOk = true;
for (const [key, client] of Object.entries(CLIENTS)) {
  if (only && only !== key) continue;
  console.log(`\n${client.title} ${client.version()}, loadout ${path.relative(root, cli) || cli}`);
  for (const scenario of client.scenarios) {
    // Codex CLI sends its first model request without waiting long for MCP servers: when loadout's
    // start takes about a second (a loaded machine), that turn has no loadout tools. Such a run
    // says nothing about loadout's tools, so it is run again (up to 3 runs), and the report says so.
    const listed = (run) => run.requests.some((request) => request.tools?.some((name) => base(name) === 'discover_all_tools'));
    let run = await runScenario(client, scenario);
    let runs = 1;
    while (!listed(run) && runs < 3) {
      run = await runScenario(client, scenario);
      runs++;
    }
    recorded[`${client.title}: ${scenario.title}`] = run;
    const report = check(run.requests, run.traffic, run.result);
    console.log(`\n  ${scenario.title}:`);
    if (runs > 1) console.log(`       (${runs} runs: in the earlier ones the first model request came before loadout was listed)`);
    for (const line of report.lines) console.log(`  ${line}`);
    allOk &&= report.ok;
  }
}
if (logFile) writeFileSync(logFile, `${JSON.stringify(recorded, null, 2)}\n`);
console.log(allOk ? '\nPASS' : '\nFAIL');
process.exit(allOk ? 0 : 1);

// One run of `client` in a fresh temp dir (loadout's config and data, HOME, project), against a fresh fake.
async function runScenario(client, scenario) {
  const temp = mkdtempSync(path.join(tmpdir(), 'loadout-clients-check-'));
  const fake = await startFakeModelApis(decide);
  try {
    const dirs = Object.fromEntries(['config', 'data', 'home', 'project', 'codex'].map((name) => [name, path.join(temp, name)]));
    for (const dir of Object.values(dirs)) mkdirSync(dir);
    writeFileSync(
      path.join(dirs.config, 'servers.yaml'),
      `servers:\n  echo:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(echoServer)}]\n${scenario.yaml ?? ''}`,
    );
    const trafficLog = path.join(temp, 'traffic.jsonl');
    const serve = [tee, trafficLog, '--', process.execPath, cli, '--config', dirs.config, '--data', dirs.data, 'serve'];
    const result = await client.runScenario({ scenario, dirs, serve, fake });
    const traffic = readTraffic(trafficLog);
    return {
      requests: fake.requests,
      traffic,
      result: { ...result, stdout: result.stdout.slice(-4000), stderr: result.stderr.slice(-4000) },
    };
  } finally {
    await fake.close();
    rmSync(temp, { recursive: true, force: true });
  }
}

function runCodex({ scenario, dirs, serve, fake }) {
  const toml = [
    'model = "gpt-5.1-codex"',
    'model_provider = "fake"',
    'approval_policy = "never"',
    'sandbox_mode = "read-only"',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${fake.url}/v1"`,
    'wire_api = "responses"',
    'env_key = "FAKE_API_KEY"',
    'supports_websockets = false',
    '[mcp_servers.loadout]',
    `command = ${JSON.stringify(process.execPath)}`,
    `args = ${JSON.stringify(serve)}`,
    // Under load, loadout's start can outlast Codex's default wait, and the first turn goes without it.
    'startup_timeout_sec = 60',
    scenario.toml,
  ].join('\n');
  writeFileSync(path.join(dirs.codex, 'config.toml'), toml);
  return runAgent(
    bin('codex'),
    [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--ephemeral',
      ...scenario.flags,
      'Use loadout to equip the echo tool, then say something through it.',
    ],
    { env: { ...process.env, HOME: dirs.home, CODEX_HOME: dirs.codex, FAKE_API_KEY: 'dummy' }, cwd: dirs.project, timeoutMs: 180_000 },
  );
}

function runGemini({ dirs, serve, fake }) {
  mkdirSync(path.join(dirs.home, '.gemini'));
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    mcpServers: { loadout: { command: process.execPath, args: serve, timeout: 60000, trust: true } },
  };
  writeFileSync(path.join(dirs.home, '.gemini', 'settings.json'), JSON.stringify(settings));
  return runAgent(
    bin('gemini'),
    [
      '-m',
      'gemini-2.5-flash',
      '--yolo',
      '--skip-trust',
      '--output-format',
      'json',
      '-p',
      'Use loadout to equip the echo tool, then say something through it.',
    ],
    {
      env: { ...process.env, HOME: dirs.home, GOOGLE_GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: 'dummy' },
      cwd: dirs.project,
      timeoutMs: 180_000,
    },
  );
}

// Each observation as a line, and whether the ones that must hold do.
function check(requests, traffic, result) {
  const lines = [];
  let ok = true;
  const observe = (holds, text, required = true) => {
    if (required) ok &&= holds;
    lines.push(`${holds ? 'ok  ' : required ? 'FAIL' : 'note'} ${text}`);
  };
  const init = traffic.find((message) => message.method === 'initialize');
  lines.push(`     client: ${init ? `${init.client?.name} ${init.client?.version}, MCP ${init.version}` : 'never initialized'}`);
  const model = requests.filter((request) => request.api);
  const decided = model.filter((request) => request.decision.call).map((request) => base(request.decision.call.name));
  lines.push(`     model calls: ${decided.join(' → ') || 'none'} (${model.length} model requests)`);
  const last = model.at(-1);
  for (const step of ['discover_all_tools', 'build_toolset']) {
    const answer = last?.results.find((r) => base(r.name) === step);
    const refused = answer && /requires approval|Invalid arguments|Unrecognized key|rejected|not allowed/i.test(answer.text);
    observe(Boolean(answer) && !refused, `${step} ran: ${answer ? answer.text.replace(/\s+/g, ' ').slice(0, 110) : 'no result'}`);
  }
  const calls = traffic.filter((message) => message.from === 'client' && message.method === 'tools/call');
  const build = calls.find((message) => message.tool === 'build-toolset');
  const notices = build
    ? traffic.filter((message) => message.from === 'server' && message.method?.endsWith('list_changed') && message.at >= build.at)
    : [];
  lines.push(`     notices after the equip: ${notices.map((message) => message.method.split('/')[1]).join(', ') || 'none'}`);
  const buildAnswer = build && traffic.find((message) => message.from === 'server' && message.id === build.id && !message.method);
  if (build && buildAnswer) lines.push(`     build-toolset with equip answered in ${buildAnswer.at - build.at} ms`);
  const relist = build && traffic.find((message) => message.from === 'client' && message.method === 'tools/list' && message.at > build.at);
  observe(
    Boolean(relist),
    relist
      ? `re-read tools/list ${relist.at - build.at} ms after the equip call (answer ${relist.at < buildAnswer?.at ? 'still held' : 'already sent'})`
      : 'never re-read tools/list after the equip',
    false,
  );
  const afterBuild = model.find((request) => request.results.some((r) => base(r.name) === 'build_toolset'));
  const nextTurnHasTool = Boolean(afterBuild?.tools.some((name) => base(name) === 'echo_echo'));
  observe(nextTurnHasTool, `the equipped tool offered on the turn right after the equip: ${nextTurnHasTool ? 'yes' : 'no'}`, false);
  if (afterBuild && buildAnswer)
    lines.push(`     that turn's model request came ${afterBuild.atMs - buildAnswer.at} ms after the equip answer`);
  const echoed = calls.find(
    (message) => message.tool === 'echo_echo' || (message.tool === 'call-tool' && message.arguments?.tool === 'echo.echo'),
  );
  const answer = last?.results.find((r) => base(r.name) === 'echo_echo' || base(r.name) === 'call_tool');
  const reached = Boolean(echoed) && Boolean(answer?.text.includes(SAID));
  observe(
    reached,
    `the downstream tool answered ${echoed ? (echoed.tool === 'call-tool' ? 'through call-tool' : 'natively') : ''}: ${answer ? answer.text.replace(/\s+/g, ' ').slice(0, 110) : 'no result'}`,
    false,
  );
  if (result.code !== 0) lines.push(`     exited ${result.code}: ${result.stderr.trim().split('\n').at(-1) ?? ''}`);
  return { ok, lines };
}
