// `npm run check:claude-code`: runs the real Claude Code (`claude -p`) offline against loadout and
// a scripted fake of the Messages API (fakeMessagesApi.mjs), with Claude Code's tool search on,
// and checks from the request bodies that loadout's tools reach the model without a ToolSearch:
// every meta-tool is in the first request's `tools` in full, and a tool equipped by build-toolset
// is there in full on the next request, and answers when called. loadout runs inside stdioTee.mjs,
// which logs each JSON-RPC message, so the check also reads the era of MCP Claude Code speaks: the
// 2026-07-28 era opens with server/discover and never sends initialize, opens subscriptions/listen,
// and after an equip lists tools again and calls the equipped tool. Opt-in, not in CI: Claude Code is
// not a dependency of loadout. It is installed once from npm into a scratch folder, from this
// folder's own package.json and lockfile; after that everything stays on loopback.
//   node scripts/claude-code-check/run.mjs [--claude PATH] [--dir SCRATCH] [--requests FILE]
// LOADOUT_CLI runs another build (say, main's) for a before/after comparison.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeMessagesApi } from './fakeMessagesApi.mjs';
import { installFromLockfile, readTraffic, runAgent } from './agentRuns.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const cli = process.env.LOADOUT_CLI ?? path.join(root, 'dist', 'bundle', 'loadout.js');
const echoServer = path.join(root, 'dist', 'test', 'fixtures', 'echo.js');
const metaTools = path.join(root, 'dist', 'src', 'gateway', 'metaTools', 'index.js');
const tee = path.join(here, 'stdioTee.mjs');
const MODERN = '2026-07-28';

const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
};

for (const file of [cli, echoServer, metaTools]) {
  if (!existsSync(file)) {
    console.error(`claude-code-check: ${path.relative(root, file)} is missing; run \`npm run build\` first`);
    process.exit(2);
  }
}
const { TOOLSET_META_TOOLS } = await import(metaTools);
const META_TOOL_NAMES = TOOLSET_META_TOOLS.map((tool) => tool.name);

const claude =
  option('--claude') ??
  process.env.CLAUDE_BIN ??
  installFromLockfile(
    here,
    option('--dir') ?? path.join(tmpdir(), 'loadout-claude-code-check'),
    ['claude'],
    'Claude Code (about 400 MB)',
  )('claude');
const version = spawnSync(claude, ['--version'], { encoding: 'utf8' });
if (version.status !== 0) {
  console.error(`claude-code-check: ${claude} --version failed: ${version.stderr || version.error?.message}`);
  process.exit(2);
}

// What the scripted model does, turn by turn: build and equip a toolset holding echo.echo, call
// the equipped tool, then finish. Like a real model, it calls only a tool it can see in the request
// (in full, or loaded by reference); a tool behind ToolSearch ends the session instead. Requests
// without loadout's tools (a title, a summary) get text.
const PREFIX = 'mcp__loadout__';
const EQUIPPED = `${PREFIX}echo_echo`;
const SAID = 'through loadout';
function reply(body) {
  const results = resultsOfThisTurn(body);
  const answered = (id) => results.some((block) => block.tool_use_id === id);
  const call = (id, name, input) =>
    isVisible(body, name) ? [{ type: 'tool_use', id, name, input }] : [{ type: 'text', text: `${name} is not in my tools.` }];
  if (answered('toolu_echo')) return [{ type: 'text', text: 'Done.' }];
  if (answered('toolu_build')) return call('toolu_echo', EQUIPPED, { text: SAID });
  const mentionsLoadout = JSON.stringify(body.tools ?? []).includes(PREFIX) || JSON.stringify(body.messages ?? []).includes(PREFIX);
  if (!results.length && mentionsLoadout)
    return call('toolu_build', `${PREFIX}build-toolset`, { name: 'echoes', tools: ['echo.echo'], equip: true });
  return [{ type: 'text', text: 'ok' }];
}

function isVisible(body, name) {
  const how = Array.isArray(body.tools) ? toolsSeen(body).get(name) : undefined;
  return how !== undefined && how !== 'deferred';
}

// The tool results sent since the model last spoke (Claude Code may put system messages after them).
function resultsOfThisTurn(body) {
  const messages = body.messages ?? [];
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
  return messages
    .slice(lastAssistant + 1)
    .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
    .filter((block) => block.type === 'tool_result');
}

// Two entries: one as a user adds it by hand (only the tools' _meta mark helps), and one as
// `loadout setup claude-code` writes it ("alwaysLoad": true on the server).
const SCENARIOS = [
  { title: 'entry added by hand (no alwaysLoad)', entry: {} },
  { title: 'entry as setup writes it ("alwaysLoad": true)', entry: { alwaysLoad: true } },
];
console.log(`Claude Code ${version.stdout.trim()}, loadout ${path.relative(root, cli) || cli}`);
const requestsFile = option('--requests');
const recorded = {};
let allOk = true;
for (const scenario of SCENARIOS) {
  const { run, requests, traffic } = await runScenario(scenario.entry);
  recorded[scenario.title] = { requests, traffic };
  const report = check(requests);
  const era = checkEra(traffic);
  console.log(`\n${scenario.title}:`);
  for (const line of [...report.lines, ...era.lines]) console.log(line);
  if (run.code !== 0) console.log(`     claude exited ${run.code}: ${run.stderr.trim().split('\n').at(-1) ?? ''}`);
  allOk &&= report.ok && era.ok && run.code === 0;
}
if (requestsFile) writeFileSync(requestsFile, `${JSON.stringify(recorded, null, 2)}\n`);
console.log(allOk ? '\nPASS' : '\nFAIL');
process.exit(allOk ? 0 : 1);

// One `claude -p` session in a fresh temp dir (config, data, HOME, project), against a fresh fake.
async function runScenario(entry) {
  const temp = mkdtempSync(path.join(tmpdir(), 'loadout-claude-code-check-'));
  const fake = await startFakeMessagesApi(reply);
  try {
    const [configDir, dataDir, home, project] = ['config', 'data', 'home', 'project'].map((name) => path.join(temp, name));
    for (const dir of [configDir, dataDir, home, project]) mkdirSync(dir);
    writeFileSync(
      path.join(configDir, 'servers.yaml'),
      `servers:\n  echo:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(echoServer)}]\n`,
    );
    const mcpConfig = path.join(temp, 'mcp.json');
    const trafficLog = path.join(temp, 'traffic.jsonl');
    const serve = [process.execPath, cli, '--config', configDir, '--data', dataDir, 'serve'];
    const loadout = { command: process.execPath, args: [tee, trafficLog, '--', ...serve], ...entry };
    writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { loadout } }));
    const run = await runAgent(
      claude,
      [
        '-p',
        'Use loadout to equip the echo tool, then say something through it.',
        '--mcp-config',
        mcpConfig,
        '--strict-mcp-config',
        '--allowedTools',
        'mcp__loadout',
        '--output-format',
        'json',
      ],
      {
        env: {
          ...process.env,
          HOME: home,
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_API_KEY: 'dummy',
          // Off by default when the API is not Anthropic's own: this is the switch that defers MCP tools.
          ENABLE_TOOL_SEARCH: 'true',
          DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
        cwd: project,
        timeoutMs: 120_000,
      },
    );
    const traffic = readTraffic(trafficLog);
    return { run, requests: fake.requests, traffic };
  } finally {
    await fake.close();
    rmSync(temp, { recursive: true, force: true });
  }
}

// Each observation from the request bodies, as a line, and whether all hold.
function check(requests) {
  const main = requests.filter((request) => request.url?.startsWith('/v1/messages') && Array.isArray(request.body?.tools));
  const answering = (id) => main.find((request) => resultsOfThisTurn(request.body).some((block) => block.tool_use_id === id));
  const first = main.find((request) => JSON.stringify(request.body).includes(PREFIX));
  const afterEquip = answering('toolu_build');
  const afterCall = answering('toolu_echo');
  const lines = [];
  const checks = [];
  const observe = (ok, text) => {
    checks.push(ok);
    lines.push(`${ok ? 'ok  ' : 'FAIL'} ${text}`);
  };
  if (!first) {
    observe(false, `no request to the Messages API named loadout's tools (${requests.length} requests received)`);
    return { ok: false, lines };
  }
  const firstSeen = toolsSeen(first.body);
  const missing = META_TOOL_NAMES.filter((name) => firstSeen.get(PREFIX + name) !== 'in full');
  lines.push(
    `     first request: ${first.body.tools.length} tools sent, ToolSearch ${firstSeen.has('ToolSearch') ? 'among them' : 'not among them'}`,
  );
  observe(
    missing.length === 0,
    missing.length
      ? `not sent in full on the first request: ${missing.map((name) => `${name} (${firstSeen.get(PREFIX + name) ?? 'absent'})`).join(', ')}`
      : `all ${META_TOOL_NAMES.length} meta-tools sent in full on the first request`,
  );
  observe(Boolean(afterEquip), afterEquip ? 'build-toolset ran and its result came back' : 'no request carried the build-toolset result');
  if (afterEquip) {
    const how = toolsSeen(afterEquip.body).get(EQUIPPED) ?? 'absent (behind ToolSearch)';
    observe(how !== 'absent (behind ToolSearch)' && how !== 'deferred', `${EQUIPPED} on the turn after equip: ${how}`);
  }
  const echoed = afterCall && resultsOfThisTurn(afterCall.body).find((block) => block.tool_use_id === 'toolu_echo');
  const echoText = JSON.stringify(echoed?.content ?? '');
  observe(
    Boolean(echoed) && !echoed.is_error && echoText.includes(SAID),
    `the equipped tool answered: ${echoed ? echoText.slice(0, 120) : 'no result'}`,
  );
  return { ok: checks.every(Boolean), lines };
}

// The era Claude Code speaks with loadout, from loadout's stdio traffic: the sequence the client
// sent (and the server's notices), then each observation of the 2026-07-28 era as a line.
function checkEra(traffic) {
  // Results are left out of the sequence, except errors and the discover answer.
  const shown = traffic.filter(
    (message) => message.from === 'client' || message.method || message.error !== undefined || message.supportedVersions,
  );
  const lines = [`     stdio sequence: ${shown.map(describe).join(' ; ')}`];
  const checks = [];
  const observe = (ok, text) => {
    checks.push(ok);
    lines.push(`${ok ? 'ok  ' : 'FAIL'} ${text}`);
  };
  const sent = traffic.filter((message) => message.from === 'client' && message.method !== undefined);
  const first = sent[0];
  observe(
    first?.method === 'server/discover' && first.version === MODERN,
    `the first message is server/discover ${MODERN}: ${first ? describe(first) : 'nothing was sent'}`,
  );
  const discoverAnswer = first && traffic.find((message) => message.from === 'server' && message.id === first.id && !message.method);
  if (discoverAnswer) lines.push(`     server/discover answered: ${describe(discoverAnswer)}`);
  const initialize = sent.find((message) => message.method === 'initialize');
  observe(!initialize, initialize ? `initialize sent: ${describe(initialize)}` : 'no initialize');
  observe(
    sent.some((message) => message.method === 'subscriptions/listen'),
    'subscriptions/listen opened',
  );
  const build = sent.findIndex((message) => message.method === 'tools/call' && message.tool === 'build-toolset');
  const after = build === -1 ? [] : sent.slice(build + 1);
  const relist = after.findIndex((message) => message.method === 'tools/list');
  observe(relist !== -1, 'tools/list again after build-toolset equipped');
  const call = after.findIndex((message) => message.method === 'tools/call' && message.tool === 'echo_echo');
  observe(call > relist && relist !== -1, 'the equipped tool echo_echo called after that tools/list');
  // After an initialize the whole exchange is 2025-era, already reported above.
  const stale = sent.filter((message) => message.method !== 'server/discover' && message.version !== MODERN);
  if (!initialize)
    observe(
      stale.length === 0,
      stale.length
        ? `messages without the ${MODERN} envelope: ${stale.map(describe).join(', ')}`
        : `every message carries ${MODERN} in _meta`,
    );
  return { ok: checks.every(Boolean), lines };
}

function describe(message) {
  const arrow = message.from === 'client' ? '→' : '←';
  const name = message.method ?? `result #${message.id}`;
  const details = [
    message.tool,
    message.version,
    message.supportedVersions && `supportedVersions ${message.supportedVersions.join(',')}`,
    message.subscription && `subscription ${message.subscription}`,
    message.params && JSON.stringify(message.params),
    message.error !== undefined && `error ${message.error} ${message.message}`,
  ].filter(Boolean);
  return `${arrow} ${name}${details.length ? ` (${details.join(', ')})` : ''}`;
}

// How each tool reaches the model in one request: 'in full' (in `tools`, not deferred), 'loaded by
// reference' (deferred, but a tool_reference in the messages, as Claude Code's "tools just became
// available" note sends, loads it without a search), or 'deferred' (found only through ToolSearch).
function toolsSeen(body) {
  const referenced = new Set();
  const visit = (value) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      if (value.type === 'tool_reference' && typeof value.name === 'string') referenced.add(value.name);
      Object.values(value).forEach(visit);
    }
  };
  visit(body.messages);
  return new Map(
    body.tools.map((tool) => [
      tool.name,
      tool.defer_loading !== true ? 'in full' : referenced.has(tool.name) ? 'loaded by reference (no ToolSearch)' : 'deferred',
    ]),
  );
}
