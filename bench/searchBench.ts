// `npm run bench:search`: loadout's search on the tool-search dev set (test/fixtures/search-dev),
// scored by the set's own evaluate.mjs, then the same catalog replicated to 10,000 tools for index
// build time, query latency and the memory the index adds, and `loadout search` run at 5,000 tools. --ablations adds a row per field and
// per ranking taken out (scored in-process with the same formula).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CatalogSearch, loadWordVectors, type CatalogTool, type SearchSetup } from '../src/catalog/index.js';
import { DEFAULT_FIELD_WEIGHTS } from '../src/catalog/lexicalIndex.js';
import { LearnedWordsStore } from '../src/catalog/learnedWords.js';
import { SearchLearning } from '../src/catalog/searchLearning.js';
import { DEFAULT_ALIGNMENT } from '../src/catalog/semanticIndex.js';
import { DEFAULT_FUSION } from '../src/catalog/searchTypes.js';
import { formatServerMap, MAP_BUDGET_BYTES, summarizeServer } from '../src/catalog/serverMap.js';
import {
  AGENT_QUERIES_FILE,
  loadAgentQueries,
  loadDevSet,
  loadWordQueries,
  scoreDevSet,
  scoreNotice,
  searchDevDir,
  wordQueryRows,
  type DevScores,
} from './searchDevSet.js';
import { percentile } from './stats.js';
import { largeSetRows, realisticMapEntries } from './searchDevLarge.js';
import { cliSearchRows } from './cliSearch.js';

const SCALE_TOOLS = 10_000;
const LATENCY_ROUNDS = 5;
const TARGETS = { recallAt3: 0.45, recallAt10: 0.65, agentRecallAt3: 0.95, p50Ms: 10, p95Ms: 25, buildMs: 2000, memoryMb: 60 };

interface EvaluateOutput {
  all: { n: number; 'recall@1': number; 'recall@3': number; 'recall@10': number; mrr10: number };
  hard: EvaluateOutput['all'];
  notHard: EvaluateOutput['all'];
  timing: { initMs: number; queryMeanMs: number; queryMaxMs: number };
}

/** Score one setup with the set's evaluate.mjs in a child process. */
function evaluate(setup: SearchSetup): EvaluateOutput {
  const module = path.join(path.dirname(fileURLToPath(import.meta.url)), 'searchDevModule.js');
  const out = execFileSync(process.execPath, [path.join(searchDevDir(), 'evaluate.mjs'), module, '--json'], {
    env: { ...process.env, LOADOUT_SEARCH_SETUP: JSON.stringify(setup) },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out) as EvaluateOutput;
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`.padStart(7);

function evaluateRow(label: string, result: EvaluateOutput): string {
  const line = (s: EvaluateOutput['all']) =>
    `R@1 ${pct(s['recall@1'])}  R@3 ${pct(s['recall@3'])}  R@10 ${pct(s['recall@10'])}  MRR@10 ${s.mrr10.toFixed(3)}`;
  return [
    `${label}`,
    `  all      n=${result.all.n}  ${line(result.all)}`,
    `  hard     n=${result.hard.n}  ${line(result.hard)}`,
    `  not hard n=${result.notHard.n}  ${line(result.notHard)}`,
    `  init ${result.timing.initMs} ms, query mean ${result.timing.queryMeanMs} ms, max ${result.timing.queryMaxMs} ms (first query loads the vectors)`,
  ].join('\n');
}

function scoresRow(label: string, scores: { all: DevScores; hard: DevScores }): string {
  const { all, hard } = scores;
  return `${label.padEnd(46)} R@1 ${pct(all.recallAt1)}  R@3 ${pct(all.recallAt3)}  R@10 ${pct(all.recallAt10)}  MRR@10 ${all.mrrAt10.toFixed(3)}  | hard R@3 ${pct(hard.recallAt3)}`;
}

/** Each field and each ranking taken out in turn, scored in-process. */
function ablations(): string[] {
  const { tools, queries } = loadDevSet();
  const score = (setup: SearchSetup) => {
    const engine = new CatalogSearch(tools, setup);
    return scoreDevSet(queries, (query) => engine.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id));
  };
  const rows = [scoresRow('default (all fields, all rankings)', score({}))];
  for (const field of ['name', 'title', 'server', 'description', 'params'] as const) {
    const setup: SearchSetup = {
      fieldWeights: { ...DEFAULT_FIELD_WEIGHTS, [field]: 0 },
      alignment: { ...DEFAULT_ALIGNMENT, fields: { ...DEFAULT_ALIGNMENT.fields, [field]: 0 } },
    };
    rows.push(scoresRow(`without field ${field}`, score(setup)));
  }
  rows.push(scoresRow('without vector alignment', score({ fusion: { ...DEFAULT_FUSION, semantic: 0 } })));
  rows.push(scoresRow('without vector expansion', score({ fusion: { ...DEFAULT_FUSION, expanded: 0 } })));
  rows.push(scoresRow('without the built-in request vocabulary', score({ fusion: { ...DEFAULT_FUSION, requestWords: 0 } })));
  rows.push(scoresRow('without the read-only preference for questions', score({ fusion: { ...DEFAULT_FUSION, questionReadBoost: 0 } })));
  rows.push(scoresRow('without word matches (vectors only)', score({ fusion: { ...DEFAULT_FUSION, lexical: 0, expanded: 0 } })));
  rows.push(scoresRow('without vectors (word matches only)', score({ vectorFile: false })));
  return rows;
}

/**
 * The agent-written queries (agent-queries.json): the first query, and server filter if any, an
 * agent that saw only loadout's instructions and meta-tools sent per task; scored in-process.
 */
function agentRows(): string[] {
  const agent = loadAgentQueries();
  if (!agent) return [`agent-written queries: none yet (write ${AGENT_QUERIES_FILE} with node dist/bench/agentQueries.js)`];
  const { tools } = loadDevSet();
  const engine = new CatalogSearch(tools);
  const scores = scoreDevSet(agent, (query, task) =>
    engine.search({ query, server: task.server, limit: 10, offset: 0 }).tools.map((tool) => tool.id),
  );
  const line = (s: DevScores) =>
    `R@1 ${pct(s.recallAt1)}  R@3 ${pct(s.recallAt3)}  R@10 ${pct(s.recallAt10)}  MRR@10 ${s.mrrAt10.toFixed(3)}`;
  const met = scores.all.recallAt3 >= TARGETS.agentRecallAt3;
  return [
    `loadout offline, agent-written queries (${agent.filter((query) => query.server).length} with a server filter)`,
    `  all      n=${scores.all.n}  ${line(scores.all)}`,
    `  hard     n=${scores.hard.n}  ${line(scores.hard)}`,
    `  not hard n=${scores.notHard.n}  ${line(scores.notHard)}`,
    `target, agent-written: right tool in the top 3 ≥ 95 %: ${met ? 'met' : 'not met'}`,
  ];
}

/** The dev set's word-queries.json: a server's name as an ordinary word of the request, or as the server's name. */
function wordRows(): string[] {
  const { tools } = loadDevSet();
  const engine = new CatalogSearch(tools);
  return wordQueryRows(loadWordQueries() ?? [], (query) => engine.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id));
}

/**
 * The built-in request vocabulary on and off, split by query parity: it was tuned on the
 * odd-numbered tasks only, so the even-numbered ones are its held-out check.
 */
function requestVocabularyRows(): string[] {
  const { tools, queries } = loadDevSet();
  const parity = (remainder: number) => queries.filter((query) => Number(query.id.replace(/\D/g, '')) % 2 === remainder);
  const rows: string[] = [];
  for (const [label, fusion] of [
    ['with', DEFAULT_FUSION],
    ['without', { ...DEFAULT_FUSION, requestWords: 0 }],
  ] as const) {
    const engine = new CatalogSearch(tools, { fusion });
    const rank = (query: string) => engine.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id);
    rows.push(scoresRow(`${label} request vocabulary, odd (tuned)`, scoreDevSet(parity(1), rank)));
    rows.push(scoresRow(`${label} request vocabulary, even (held out)`, scoreDevSet(parity(0), rank)));
  }
  return rows;
}

/** The weak-match notice on the set: how often it stood over a good answer, and how often a bad one went without it. */
function noticeRows(): string[] {
  const { tools, queries } = loadDevSet();
  const engine = new CatalogSearch(tools);
  const notice = scoreNotice(queries, (query) => {
    const { tools: found, strong } = engine.search({ query, limit: 10, offset: 0 });
    return { ids: found.map((tool) => tool.id), strong };
  });
  const pctOf = (count: number) => `${count}/${notice.n} (${((100 * count) / notice.n).toFixed(1)} %)`;
  return [
    `weak-match notice: shown ${pctOf(notice.shown)}; false alarms (shown, right tool in the top 3) ${pctOf(notice.falseAlarms)} — target ≤ 5 %: ${notice.falseAlarms <= 0.05 * notice.n ? 'ok' : 'OVER TARGET'}; misses (not shown, right tool not in the top 3) ${pctOf(notice.misses)}`,
  ];
}

const LEARNING_CASES = 10;

/**
 * Learning that remembers: the first dev tasks whose expected tool the offline ranking does not
 * put first are each asked once and followed by using that tool (as an agent would, in its own
 * session); then, in a new index over what was recorded, the same query is asked again. Also:
 * what the recorded lessons do to every other task's ranking.
 */
async function learningRows(): Promise<string[]> {
  const { tools, queries } = loadDevSet();
  const plain = new CatalogSearch(tools);
  const top = (engine: CatalogSearch, query: string) => engine.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id);
  const cases = queries.filter((query) => !query.expected.includes(top(plain, query.query)[0] ?? '')).slice(0, LEARNING_CASES);
  const dir = mkdtempSync(path.join(tmpdir(), 'loadout-bench-learning-'));
  try {
    const store = new LearnedWordsStore(path.join(dir, 'learned-words.json'));
    const learning = new SearchLearning(store, () => undefined);
    for (const query of cases) {
      const session = {};
      learning.queried(session, query.query, top(plain, query.query));
      await learning.used(session, [query.expected[0]!]);
    }
    const { words, queries: recall } = await store.readAll();
    const remembering = new CatalogSearch(tools, { vocabulary: { learned: words }, recall });
    const wordsOnly = new CatalogSearch(tools, { vocabulary: { learned: words } });
    const firstAgain = (engine: CatalogSearch) => cases.filter((query) => top(engine, query.query)[0] === query.expected[0]).length;
    const caseIds = new Set(cases.map((query) => query.id));
    const others = queries.filter((query) => !caseIds.has(query.id));
    const othersAt3 = (engine: CatalogSearch) => scoreDevSet(others, (query) => top(engine, query)).all.recallAt3;
    const remembered = firstAgain(remembering);
    return [
      `learning: ${cases.length} dev tasks whose tool was not first, each asked once and that tool used; the same query again ranks it first in ${remembered}/${cases.length} — target ≥ 9: ${remembered >= 9 ? 'ok' : 'UNDER TARGET'} (with learned words only, as before: ${firstAgain(wordsOnly)}/${cases.length})`,
      `  the other ${others.length} tasks, R@3 without lessons ${pct(othersAt3(plain))}, with them ${pct(othersAt3(remembering))}`,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bytes of the map of the servers (instructions, discover-all-tools {}) for the dev catalog's servers and for 35. */
function mapRows(): string[] {
  const { tools } = loadDevSet();
  const byServer = new Map<string, CatalogTool['definition'][]>();
  for (const tool of tools) byServer.set(tool.server, [...(byServer.get(tool.server) ?? []), tool.definition]);
  const servers = [...byServer];
  const entries = (count: number) =>
    Array.from({ length: count }, (_, index) => {
      const [name, definitions] = servers[index % servers.length]!;
      const server = index < servers.length ? name : `${name}-${Math.floor(index / servers.length)}`;
      return { server, summary: summarizeServer(server, { tools: definitions }), state: { kind: 'ready' } as const };
    });
  const bytes = (count: number) => Buffer.byteLength(formatServerMap(entries(count)).join('\n'));
  const at35 = bytes(35);
  // The large set's server names (and second accounts of them): the map names all, or says how many it leaves out.
  const large = [50, 200, 400].map((count) => {
    const real = realisticMapEntries(count);
    const map = formatServerMap(real);
    const left = Number(/^… and (\d+) more servers/.exec(map.at(-1) ?? '')?.[1] ?? 0);
    return { count, bytes: Buffer.byteLength(map.join('\n')), named: count - left, lines: map.length };
  });
  const at200 = large.find((row) => row.count === 200)!;
  return [
    `server map: ${servers.length} servers ${bytes(servers.length)} B; 35 servers (copies under new keys) ${at35} B — target ≤ ${MAP_BUDGET_BYTES} B: ${at35 <= MAP_BUDGET_BYTES ? 'ok' : 'OVER TARGET'}`,
    `server map, the large set's names: ${large.map((row) => `${row.count} servers ${row.bytes} B in ${row.lines} lines, ${row.named} named`).join('; ')} — target at 200: all named within ${MAP_BUDGET_BYTES} B: ${at200.named === 200 && at200.bytes <= MAP_BUDGET_BYTES ? 'met' : 'NOT MET'}`,
  ];
}

/** The dev catalog copied under new server keys up to `count` tools. */
function replicate(tools: readonly CatalogTool[], count: number): CatalogTool[] {
  const out: CatalogTool[] = [];
  for (let copy = 0; out.length < count; copy++) {
    for (const tool of tools) {
      if (out.length === count) break;
      const server = copy === 0 ? tool.server : `${tool.server}-${copy}`;
      out.push({ ...tool, server, id: `${server}.${tool.name}` });
    }
  }
  return out;
}

// CPU time of this process: on a loaded machine wall time mostly measures waiting for a core.
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function heapAndBuffersMb(): number {
  globalThis.gc?.();
  const usage = process.memoryUsage();
  return (usage.heapUsed + usage.arrayBuffers) / 1024 / 1024;
}

/** Build time, query latency and memory at 10,000 tools. */
function scale(): string[] {
  const { tools, queries } = loadDevSet();
  const many = replicate(tools, SCALE_TOOLS);
  const before = heapAndBuffersMb();
  const vectorStart = performance.now();
  loadWordVectors();
  const vectorMs = performance.now() - vectorStart;
  const buildStart = performance.now();
  const buildCpu = cpuMs();
  const engine = new CatalogSearch(many);
  const lexicalMs = performance.now() - buildStart;
  engine.search({ query: 'warm up the vector index', limit: 10, offset: 0 });
  const buildMs = performance.now() - buildStart;
  const buildCpuMs = cpuMs() - buildCpu;
  const samples: number[] = [];
  const cpuSamples: number[] = [];
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const { query } of queries) {
      const start = performance.now();
      const startCpu = cpuMs();
      engine.search({ query, limit: 10, offset: 0 });
      samples.push(performance.now() - start);
      cpuSamples.push(cpuMs() - startCpu);
    }
  }
  const addedMb = heapAndBuffersMb() - before;
  const p50 = percentile(samples, 50);
  const p95 = percentile(samples, 95);
  const mark = (ok: boolean) => (ok ? 'ok' : 'OVER TARGET');
  return [
    `${many.length} tools (the dev catalog copied under new server keys); load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')} on ${cpus().length} cores`,
    `  vector file load (once per process, on the first query): ${vectorMs.toFixed(0)} ms`,
    `  index build: ${buildMs.toFixed(0)} ms (word index ${lexicalMs.toFixed(0)} ms + vector index on first query; CPU ${buildCpuMs.toFixed(0)} ms) — target ≤ ${TARGETS.buildMs} ms: ${mark(buildMs <= TARGETS.buildMs)}`,
    `  query p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms over ${samples.length} queries (CPU p50 ${percentile(cpuSamples, 50).toFixed(2)} ms, p95 ${percentile(cpuSamples, 95).toFixed(2)} ms) — targets ≤ ${TARGETS.p50Ms} / ≤ ${TARGETS.p95Ms} ms: ${mark(p50 <= TARGETS.p50Ms && p95 <= TARGETS.p95Ms)}`,
    `  memory added by the index and the vectors: ${addedMb.toFixed(1)} MB (heap + array buffers${globalThis.gc ? ', after gc' : ', run with --expose-gc for a settled figure'}) — target ≤ ${TARGETS.memoryMb} MB: ${mark(addedMb <= TARGETS.memoryMb)}`,
  ];
}

if (!existsSync(path.join(searchDevDir(), 'evaluate.mjs'))) {
  console.error(`No tool-search dev set at ${searchDevDir()}: set LOADOUT_SEARCH_DEV to its folder.`);
  process.exit(2);
}
const hybrid = evaluate({});
console.log(`Tool-search dev set: ${searchDevDir()}\n`);
// Offline: what ships with loadout (word vectors, request vocabulary), none of the user's
// keywords or synonyms and no learned words; those have their own rows below.
console.log(evaluateRow("loadout offline, users' words (word matches + word vectors + built-in request vocabulary)", hybrid));
console.log(
  evaluateRow('  the same without the built-in request vocabulary', evaluate({ fusion: { ...DEFAULT_FUSION, requestWords: 0 } })),
);
console.log(evaluateRow('  the same without word vectors (vector file unavailable)', evaluate({ vectorFile: false })));
const { all } = hybrid;
const met = all['recall@3'] >= TARGETS.recallAt3 && all['recall@10'] >= TARGETS.recallAt10;
console.log(`targets, users' words: R@3 ≥ 45 %, R@10 ≥ 65 %: ${met ? 'met' : 'not met'}\n`);
// Scale before anything in this process ranks: it measures the memory the vectors add, so they must not be loaded yet.
const scaleRows = scale();
console.log(`${[...agentRows(), ...wordRows()].join('\n')}\n`);
console.log(`${largeSetRows().join('\n')}\n`);
console.log(`${requestVocabularyRows().join('\n')}\n`);
console.log(`${mapRows().join('\n')}\n`);
console.log(`${scaleRows.join('\n')}\n`);
console.log(`${[...noticeRows(), ...(await learningRows())].join('\n')}\n`);
console.log(`${(await cliSearchRows()).join('\n')}\n`);
if (process.argv.includes('--ablations')) console.log(ablations().join('\n'));
