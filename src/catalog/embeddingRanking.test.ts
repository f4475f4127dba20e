// Model-backed ranking against an embeddings endpoint run on loopback by the test (ollama and
// OpenAI request shapes): cache hit, cache across restarts, model change, slow and failing
// endpoints falling back with one log line, and fusion with the offline rankings.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingsSettingsSchema, type EmbeddingsSettings } from '../config/index.js';
import type { Logger } from '../shared/index.js';
import { catalogTool } from '../../test/helpers/catalogTools.js';
import { useTempDir } from '../../test/helpers/tempDir.js';
import { EmbeddingRanking } from './embeddingRanking.js';
import { CatalogSearch } from './search.js';
import { DEFAULT_FUSION } from './searchTypes.js';

// The fake model: a word's dimension is its concept's, so "sprint" and "cycle" embed alike.
const CONCEPTS: Record<string, string> = {
  sprint: 'cycle',
  cycle: 'cycle',
  iteration: 'cycle',
  ticket: 'issue',
  issue: 'issue',
  bug: 'issue',
};
const DIMENSIONS = 16;
function embed(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(Boolean)) {
    const concept = CONCEPTS[word] ?? word;
    let hash = 0;
    for (const char of concept) hash = (hash * 31 + char.charCodeAt(0)) % DIMENSIONS;
    vector[hash]! += 1;
  }
  return vector;
}

interface Received {
  path: string;
  model: string;
  input: string[];
}

let server: Server;
let baseUrl: string;
const received: Received[] = [];
let behaviour: 'ok' | 'slow' | 'fail' = 'ok';

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      received.push({ path: request.url ?? '', model, input });
      if (behaviour === 'fail') return void response.writeHead(500).end('model crashed');
      const answer = () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        const vectors = input.map(embed);
        response.end(
          JSON.stringify(
            request.url === '/api/embed'
              ? { embeddings: vectors }
              : { data: vectors.map((embedding, index) => ({ embedding, index })).reverse() },
          ),
        );
      };
      // 'slow' never answers: the client's timeout has to end the request.
      if (behaviour !== 'slow') answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const TOOLS = [
  catalogTool('tracker', 'create_issue', 'Create a new issue.'),
  catalogTool('tracker', 'get_active_cycle', 'Get the current cycle of a team.'),
  catalogTool('tracker', 'list_users', 'List the users.'),
];

function capturingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const logger: Logger & { warnings: string[] } = {
    level: 'warn',
    warnings,
    child: () => logger,
    error: () => undefined,
    warn: (object, message) => void warnings.push(`${message ?? ''} ${JSON.stringify(object)}`),
    info: () => undefined,
    debug: () => undefined,
  };
  return logger;
}

function settings(extra: Partial<EmbeddingsSettings> = {}): EmbeddingsSettings {
  return EmbeddingsSettingsSchema.parse({
    url: baseUrl,
    api: 'ollama',
    model: 'fake-embed',
    query_prefix: 'query: ',
    document_prefix: 'doc: ',
    timeout_ms: 10_000,
    ...extra,
  });
}
const cacheDir = useTempDir('loadout-embed-');
const cacheFile = () => path.join(cacheDir(), 'embeddings-cache.json');
const documentRequests = () => received.filter((request) => request.input.some((text) => text.startsWith('doc: ')));

describe('EmbeddingRanking', () => {
  it('embeds each tool once (ollama), then only the query; the cache survives a restart', async () => {
    behaviour = 'ok';
    received.length = 0;
    const file = cacheFile();
    const ranking = new EmbeddingRanking(settings(), file, capturingLogger());
    const scores = await ranking.scores('which sprint are we in', TOOLS);
    expect([...scores!].sort((a, b) => b[1] - a[1])[0]![0]).toBe('tracker.get_active_cycle');
    expect(documentRequests()).toHaveLength(1);
    expect(received[0]).toMatchObject({ path: '/api/embed', model: 'fake-embed' });
    expect(received.at(-1)!.input).toEqual(['query: which sprint are we in']);
    await ranking.scores('file a ticket', TOOLS);
    expect(documentRequests()).toHaveLength(1);
    await new EmbeddingRanking(settings(), file, capturingLogger()).scores('file a ticket', TOOLS);
    expect(documentRequests()).toHaveLength(1);
  });

  it('re-embeds for another model, and speaks the OpenAI shape (/v1/embeddings, data[].embedding by index)', async () => {
    received.length = 0;
    const file = cacheFile();
    await new EmbeddingRanking(settings(), file, capturingLogger()).scores('bug', TOOLS);
    const openai = new EmbeddingRanking(settings({ api: 'openai', model: 'other-embed' }), file, capturingLogger());
    const scores = await openai.scores('report a bug', TOOLS);
    expect(documentRequests()).toHaveLength(2);
    expect(received.at(-1)).toMatchObject({ path: '/v1/embeddings', model: 'other-embed' });
    expect([...scores!].sort((a, b) => b[1] - a[1])[0]![0]).toBe('tracker.create_issue');
  });

  it('falls back (undefined) on a slow or failing endpoint, logging once until it recovers', async () => {
    const logger = capturingLogger();
    const ranking = new EmbeddingRanking(settings({ timeout_ms: 1000 }), cacheFile(), logger);
    behaviour = 'slow';
    expect(await ranking.scores('sprint', TOOLS)).toBeUndefined();
    behaviour = 'fail';
    expect(await ranking.scores('sprint', TOOLS)).toBeUndefined();
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toMatch(/embeddings endpoint unavailable; ranking offline/);
    behaviour = 'ok';
    expect(await ranking.scores('sprint', TOOLS)).toBeInstanceOf(Map);
  });

  it("fuses the model's ranking with the offline ones", async () => {
    behaviour = 'ok';
    const scores = await new EmbeddingRanking(settings(), cacheFile(), capturingLogger()).scores('which sprint', TOOLS);
    // Word matches alone, without the built-in request vocabulary (which maps sprint → cycle).
    const search = new CatalogSearch(TOOLS, { vectorFile: false, fusion: { ...DEFAULT_FUSION, requestWords: 0 } });
    expect(search.search({ query: 'which sprint', limit: 3, offset: 0 }).tools).toEqual([]);
    expect(search.search({ query: 'which sprint', limit: 1, offset: 0, modelScores: scores! }).tools[0]!.id).toBe(
      'tracker.get_active_cycle',
    );
  });
});
