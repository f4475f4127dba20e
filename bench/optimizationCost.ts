// What a full evaluation of one tool costs: 4 candidates × 15 golden prompts plus the canonical
// baseline (75 model requests) through the real OpenAI-compatible client against the local fake
// endpoint. Run: `npm run build && node dist/bench/optimizationCost.js [repetitions]`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CatalogStore } from '../src/catalog/index.js';
import { GatewaySettingsSchema, OptimizationSettingsSchema, ServerConfigSchema, StateStore } from '../src/config/index.js';
import { ServerPool } from '../src/downstream/index.js';
import { OpenAiBackend, OptimizationLoop, OptimizationStore, runEvaluation, type PromptInput } from '../src/optimization/index.js';
import { silentLogger } from '../src/shared/index.js';
import { startFakeOpenAi } from '../test/fixtures/fakeOpenAi.js';

const CANDIDATES = 4;
const repetitions = Number(process.argv[2] ?? 5);
const echoScript = path.join(path.dirname(fileURLToPath(import.meta.url)), '../test/fixtures/echo.js');
const prompts: PromptInput[] = (['direct', 'indirect', 'negative'] as const).flatMap((category) =>
  [1, 2, 3, 4, 5].map((i) => ({
    category,
    prompt: category === 'negative' ? `What is the population of city number ${i}?` : `Please echo this message back, variant ${i}`,
  })),
);

const root = await mkdtemp(path.join(tmpdir(), 'loadout-bench-'));
const fake = await startFakeOpenAi();
const configs = { echo: ServerConfigSchema.parse({ command: process.execPath, args: [echoScript] }) };
const pool = new ServerPool(configs, { logger: silentLogger });
try {
  const catalog = new CatalogStore({
    pool,
    cacheFile: path.join(root, 'catalog.json'),
    settings: GatewaySettingsSchema.parse({}),
    logger: silentLogger,
  });
  await catalog.discover(['echo']);
  const timesMs: number[] = [];
  for (let rep = 0; rep < repetitions; rep++) {
    const loop = new OptimizationLoop({
      store: new OptimizationStore(new StateStore(path.join(root, `rep-${rep}`, 'state.json'))),
      catalog,
      settings: OptimizationSettingsSchema.parse({}),
    });
    await loop.savePrompts('echo', 'echo', prompts);
    for (let i = 1; i <= CANDIDATES; i++) await loop.propose('echo', 'echo', `Echo a message back verbatim, phrasing ${i}.`);
    const backend = new OpenAiBackend({ baseUrl: fake.baseUrl, model: 'fake', timeoutMs: 10_000 });
    const summary = await runEvaluation(loop, backend, catalog.current, { server: 'echo', tool: 'echo' });
    timesMs.push(summary.ms);
  }
  timesMs.sort((a, b) => a - b);
  const median = timesMs[Math.floor(timesMs.length / 2)]!;
  const runs = (CANDIDATES + 1) * prompts.length;
  process.stdout.write(
    `${CANDIDATES} candidates × ${prompts.length} prompts + baseline = ${runs} runs; ${repetitions} repetitions\n` +
      `median ${median} ms per evaluation (${(median / runs).toFixed(2)} ms per run), min ${timesMs[0]} ms, max ${timesMs.at(-1)} ms\n` +
      `requests served by the fake endpoint: ${fake.requests.length}\n`,
  );
} finally {
  await pool.close();
  await fake.close();
  await rm(root, { recursive: true, force: true });
}
