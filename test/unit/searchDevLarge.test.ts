// Floor on the large tool-search dev set (test/fixtures/search-dev-large: 3,009 real tools from
// 108 npm servers, 60 tasks in users' own words): what the ranking reached when the set was
// committed, and the targets (R@3 ≥ 55 %, R@10 ≥ 75 %, halves within 5 points at 3).
import { describe, expect, it } from 'vitest';
import { largeDevDir, loadLargeDevSet } from '../../bench/searchDevLarge.js';
import { AGENT_QUERIES_FILE, loadAgentQueries, scoreDevSet } from '../../bench/searchDevSet.js';

// Reached when the floor was last raised: 44/60 at 3, 55/60 at 10 (the ranking before the set: 39
// and 53; before naming a server became a ranking of its own: 43 and 54).
const FLOOR = { recallAt3: 44 / 60, recallAt10: 55 / 60 };
// The agent-written queries (agent-queries.json, written from the map and meta-tools only): 57/60
// at 3 when committed; the target is 95 %.
const AGENT_FLOOR = { recallAt3: 57 / 60 };

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
});
