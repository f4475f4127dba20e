// Floor on the large tool-search dev set (test/fixtures/search-dev-large: 3,009 real tools from
// 108 npm servers, 60 tasks in users' own words): what the ranking reached when the set was
// committed, and the targets (R@3 ≥ 55 %, R@10 ≥ 75 %, halves within 5 points at 3).
import { describe, expect, it } from 'vitest';
import { largeDevDir, loadLargeDevSet } from '../../bench/searchDevLarge.js';
import { AGENT_QUERIES_FILE, loadAgentQueries, loadWordQueries, scoreDevSet, WORD_QUERIES_FILE } from '../../bench/searchDevSet.js';

// Reached when the floor was last raised: 44/60 at 3, 55/60 at 10 (the ranking before the set: 39
// and 53; before naming a server became a ranking of its own: 43 and 54).
const FLOOR = { recallAt3: 44 / 60, recallAt10: 55 / 60 };
// The agent-written queries (agent-queries.json, written from the map and meta-tools only): 57/60
// at 3 when committed; the target is 95 %.
const AGENT_FLOOR = { recallAt3: 57 / 60 };
// word-queries.json (a server's name as an everyday word of the request): 23/38 at 3 when written
// (12/26 of those that use it in its everyday sense), 26/38 (15/26) once such a word names its
// server only where the query uses it as a name.
const WORD_FLOOR = { recallAt3: 26 / 38, everydayAt3: 15 / 26 };

describe('search on the large dev set', () => {
  it('keeps recall@3 and recall@10 at or above the floor, on the tuned and the held-out half alike', () => {
    const { catalog, queries } = loadLargeDevSet();
    const rank = (query: string) => catalog.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id);
    const scores = scoreDevSet(queries, rank);
    expect(scores.all.n).toBe(60);
    expect(scores.all.recallAt3).toBeGreaterThanOrEqual(FLOOR.recallAt3);
    expect(scores.all.recallAt10).toBeGreaterThanOrEqual(FLOOR.recallAt10);
    const half = (remainder: number) => queries.filter((query) => Number(query.id.replace(/\D/g, '')) % 2 === remainder);
    const odd = scoreDevSet(half(1), rank).all.recallAt3;
    const even = scoreDevSet(half(0), rank).all.recallAt3;
    expect(Math.abs(odd - even)).toBeLessThanOrEqual(0.05);
  });

  it('keeps the right tool in the top 3 for the agent-written queries, each with its server filter', () => {
    const agent = loadAgentQueries(largeDevDir());
    expect(agent, `${AGENT_QUERIES_FILE} is part of the repository`).toBeDefined();
    const { catalog } = loadLargeDevSet();
    const scores = scoreDevSet(agent!, (query, task) =>
      catalog.search({ query, server: task.server, limit: 10, offset: 0 }).tools.map((tool) => tool.id),
    );
    expect(scores.all.n).toBe(60);
    expect(scores.all.recallAt3).toBeGreaterThanOrEqual(AGENT_FLOOR.recallAt3);
  });

  it("keeps the right tool in the top 3 where a server's name is an everyday word of the request", () => {
    const queries = loadWordQueries(largeDevDir());
    expect(queries, `${WORD_QUERIES_FILE} is part of the repository`).toBeDefined();
    const { catalog } = loadLargeDevSet();
    const rank = (query: string) => catalog.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id);
    const scores = scoreDevSet(queries!, rank);
    expect(scores.all.n).toBe(38);
    expect(scores.all.recallAt3).toBeGreaterThanOrEqual(WORD_FLOOR.recallAt3);
    const everyday = scoreDevSet(
      queries!.filter((query) => query.sense === 'word'),
      rank,
    );
    expect(everyday.all.recallAt3).toBeGreaterThanOrEqual(WORD_FLOOR.everydayAt3);
  });
});
