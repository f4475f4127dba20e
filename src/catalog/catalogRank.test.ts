// The one ranking both discover-all-tools and `loadout search` answer with: the model's scores
// fold in, the server filter ranks within one server, and a session's query is remembered.
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { ServerConfigSchema } from '../config/index.js';
import { Catalog } from './catalog.js';
import { rank, type RankSource } from './catalogRank.js';

const tool = (name: string, description: string): Tool => ({ name, description, inputSchema: { type: 'object' } });

const catalog = Catalog.build({
  configs: { fs: ServerConfigSchema.parse({ command: 'node' }), notes: ServerConfigSchema.parse({ command: 'node' }) },
  definitions: {
    fs: { discoveredAt: 'x', tools: [tool('read_file', 'Read a file from disk.'), tool('write_file', 'Write a file to disk.')] },
    notes: { discoveredAt: 'x', tools: [tool('read_note', 'Read a note.'), tool('archive', 'Put something away for later.')] },
  },
  search: { vectorFile: false },
});

function source(scores?: Record<string, number>): RankSource & { queried: [object, string, readonly string[]][] } {
  const queried: [object, string, readonly string[]][] = [];
  return {
    current: catalog,
    queried,
    modelScores: () => Promise.resolve(scores ? new Map(Object.entries(scores)) : undefined),
    learning: { queried: (session, query, shown) => queried.push([session, query, shown]) },
  };
}

describe('rank', () => {
  it('folds the embeddings model into the ranking', async () => {
    // No word of the query is in the catalog: only the model can rank.
    expect((await rank(source(), { query: 'stash it', limit: 4 })).hits).toEqual([]);
    const withModel = await rank(source({ 'notes.archive': 0.9, 'fs.write_file': 0.2 }), { query: 'stash it', limit: 4 });
    expect(withModel.hits.map((hit) => hit.tool.id)).toEqual(['notes.archive', 'fs.write_file']);
  });

  it('ranks within one server when asked, and pages', async () => {
    const answer = await rank(source(), { query: 'read', server: 'notes', limit: 5 });
    expect(answer.hits.map((hit) => hit.tool.id)).toEqual(['notes.read_note']);
    expect(answer.total).toBe(1);
    // Each page is the next slice of the one ranking, which keeps its total.
    const whole = await rank(source(), { query: 'read file', limit: 10 });
    const ids = whole.hits.map((hit) => hit.tool.id);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    for (const offset of [0, 1, 2]) {
      const page = await rank(source(), { query: 'read file', limit: 1, offset });
      expect(page.hits.map((hit) => hit.tool.id)).toEqual([ids[offset]]);
      expect(page.total).toBe(whole.total);
    }
    expect((await rank(source(), { query: 'read file', limit: 2, offset: 1 })).hits.map((hit) => hit.tool.id)).toEqual(ids.slice(1, 3));
  });

  it("remembers the asking session's query with the tools shown, and nothing for the CLI", async () => {
    const session = {};
    const asked = source();
    await rank(asked, { query: 'read a file', limit: 2, searcher: session });
    expect(asked.queried).toEqual([[session, 'read a file', expect.arrayContaining(['fs.read_file'])]]);
    const cli = source();
    await rank(cli, { query: 'read a file', limit: 2 });
    expect(cli.queried).toEqual([]);
  });

  it('gives reasons only when asked', async () => {
    const plain = await rank(source(), { query: 'read file', limit: 1 });
    const explained = await rank(source(), { query: 'read file', limit: 1, explain: true });
    expect(plain.hits[0]?.lexical?.matches).toEqual([]);
    expect(explained.hits[0]?.lexical?.matches.map((match) => match.term)).toEqual(['read', 'fil']);
  });
});
