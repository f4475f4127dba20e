// Test helpers for the optimization loop: a catalog over cached definitions of an "echo" and a
// "notes" server (nothing is spawned), golden prompts the keyword model separates cleanly, and a
// loop over a temp state.json.
import { writeFile } from 'node:fs/promises';
import type { CreateMessageRequest, CreateMessageResult, CreateMessageResultWithTools } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import path from 'node:path';
import { CatalogStore, writeDefinitionCache } from '../../src/catalog/index.js';
import { OptimizationSettingsSchema, ServerConfigSchema, StateStore, GatewaySettingsSchema } from '../../src/config/index.js';
import { ServerPool } from '../../src/downstream/index.js';
import { OptimizationLoop, OptimizationStore, type PromptInput } from '../../src/optimization/index.js';
import { silentLogger } from '../../src/shared/index.js';
import { startFakeOpenAi, type FakeOpenAi } from '../fixtures/fakeOpenAi.js';
import { generationAnswer, pickTool } from '../fixtures/keywordModel.js';
import { fixture, nodeServer, writeServersYaml } from './gateway.js';

/** The canonical description of echo.echo: it shares no keyword with the golden prompts. */
export const ECHO_CANONICAL = 'Return the given text unchanged.';
/** A candidate the keyword model picks for every direct and indirect prompt. */
export const GOOD_CANDIDATE = 'Echo a message back verbatim: use when the user wants words repeated exactly as typed.';
/** A candidate that only wins direct prompts (fails min_overall). */
export const WEAK_CANDIDATE = 'Echo tool for messages.';

/** 5 direct, 5 indirect and 5 negative prompts for echo.echo. */
export const GOLDEN_PROMPTS: PromptInput[] = [
  ...[1, 2, 3, 4, 5].map((i) => ({ category: 'direct' as const, prompt: `Please echo this message number ${i}` })),
  ...[1, 2, 3, 4, 5].map((i) => ({ category: 'indirect' as const, prompt: `I need my words repeated exactly, attempt ${i}` })),
  ...['capital city of France', 'tallest mountain on Earth', 'boiling point of water', 'author of Hamlet', 'speed of light'].map((q) => ({
    category: 'negative' as const,
    prompt: `What is the ${q}?`,
  })),
];

const echoTools = [
  {
    name: 'echo',
    description: ECHO_CANONICAL,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'add',
    description: 'Add two numbers and return the sum as structured content.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  },
];
const notesTools = [
  {
    name: 'search_notes',
    description: 'Search saved notes by keyword and return the matching text.',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } } },
  },
];

/** A loop over temp dirs with a cached two-server catalog. */
export async function makeLoop(
  dataDir: string,
  settings: Record<string, unknown> = {},
): Promise<{ loop: OptimizationLoop; catalog: CatalogStore; stateFile: string }> {
  const cacheFile = path.join(dataDir, 'catalog.json');
  const stateFile = path.join(dataDir, 'state.json');
  await writeDefinitionCache(cacheFile, {
    echo: { discoveredAt: new Date().toISOString(), tools: echoTools as never },
    notes: { discoveredAt: new Date().toISOString(), tools: notesTools as never },
  });
  const configs = { echo: ServerConfigSchema.parse({ command: 'node' }), notes: ServerConfigSchema.parse({ command: 'node' }) };
  const catalog = new CatalogStore({
    pool: new ServerPool(configs, { logger: silentLogger }),
    cacheFile,
    settings: GatewaySettingsSchema.parse({}),
    logger: silentLogger,
  });
  await catalog.ensureLoaded();
  const loop = new OptimizationLoop({
    store: new OptimizationStore(new StateStore(stateFile)),
    catalog,
    settings: OptimizationSettingsSchema.parse(settings),
  });
  return { loop, catalog, stateFile };
}

/** Write text to a file (for corrupting state.json in tests). */
export function overwrite(file: string, text: string): Promise<void> {
  return writeFile(file, text);
}

/** A fake OpenAI-compatible endpoint for the whole describe block, reset to 'ok' before each test. */
export function useFakeOpenAi(): () => FakeOpenAi {
  let fake: FakeOpenAi | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterAll(() => fake?.close());
  beforeEach(() => {
    fake!.mode = 'ok';
  });
  return () => fake!;
}

/** servers.yaml with the echo fixture and the openai backend pointing at `baseUrl`. */
export function writeEchoWithBackend(configDir: string, baseUrl: string): Promise<string> {
  return writeServersYaml(
    configDir,
    { echo: nodeServer(fixture('echo')) },
    { optimization: { backend: 'openai', base_url: baseUrl, model: 'fake-model', expose_tools: true } },
  );
}

/**
 * The sampling client's "model": the keyword model, answering natively with tool_use blocks when the
 * request carries tools, or with the JSON choice when the tools are listed in the system prompt.
 */
export function samplingAnswer(params: CreateMessageRequest['params']): CreateMessageResult | CreateMessageResultWithTools {
  const first = params.messages[0]?.content;
  const user = first && !Array.isArray(first) && first.type === 'text' ? first.text : '';
  const system = params.systemPrompt ?? '';
  if (params.tools) {
    const tool = pickTool(
      user,
      params.tools.map((t) => ({ name: t.name, description: t.description ?? '' })),
    );
    const content: CreateMessageResultWithTools['content'] = tool
      ? [{ type: 'tool_use', id: 'u1', name: tool, input: {} }]
      : [{ type: 'text', text: 'Directly.' }];
    return { role: 'assistant', model: 'client-model', stopReason: tool ? 'toolUse' : 'endTurn', content };
  }
  const listed = [...system.matchAll(/^- (\S+): (.*)$/gm)].map(([, name, description]) => ({ name: name!, description: description! }));
  const text = listed.length ? JSON.stringify({ tool: pickTool(user, listed) ?? null }) : generationAnswer(system, user);
  return { role: 'assistant', model: 'client-model', content: { type: 'text', text } };
}
