// The tool-search development set (test/fixtures/search-dev, owned by the repo): its catalog as loadout
// catalog tools, and the set's own scoring (recall@1/3/10, MRR@10 for all / hard / not hard),
// so the bench and the regression test score loadout's search exactly as evaluate.mjs does.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Tool } from '@modelcontextprotocol/server';
import type { CatalogTool } from '../src/catalog/index.js';

/** Where the set lives: LOADOUT_SEARCH_DEV (to score another set), else the copy in test/fixtures/search-dev. */
export function searchDevDir(): string {
  if (process.env.LOADOUT_SEARCH_DEV) return path.resolve(process.env.LOADOUT_SEARCH_DEV);
  // This file runs from bench/ (vitest) or dist/bench/ (compiled).
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = path.basename(path.dirname(here)) === 'dist' ? path.resolve(here, '..', '..') : path.resolve(here, '..');
  return path.join(root, 'test', 'fixtures', 'search-dev');
}

/** One task of the set. */
export interface DevQuery {
  id: string;
  query: string;
  expected: string[];
  hard?: boolean;
  /** The `server` filter sent with the query (agent-written queries only). */
  server?: string;
  /** The task the query was written for (agent-written queries only). */
  task?: string;
  /** Whether a server's name in the query is an ordinary word (`word`) or names the server (`name`); word-queries.json only. */
  sense?: 'word' | 'name';
}

/** Tasks where a word of the request is also a server's name (word-queries.json beside queries.json). */
export const WORD_QUERIES_FILE = 'word-queries.json';

/** The set's word-queries.json, if it has one. */
export function loadWordQueries(dir = searchDevDir()): DevQuery[] | undefined {
  const file = path.join(dir, WORD_QUERIES_FILE);
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { queries: DevQuery[] }).queries;
}

/**
 * The bench's rows for word-queries.json: all, the tasks whose server-name word is an ordinary
 * word, those that name the server, and the tasks missed at 3 with their rank.
 */
export function wordQueryRows(queries: readonly DevQuery[], rank: (query: string) => string[]): string[] {
  const scores = scoreDevSet(queries, rank);
  const sense = (kind: 'word' | 'name') =>
    scoreDevSet(
      queries.filter((query) => query.sense === kind),
      rank,
    ).all;
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`.padStart(7);
  const line = (label: string, s: DevScores) =>
    `  ${label.padEnd(16)} n=${String(s.n).padStart(2)}  R@1 ${pct(s.recallAt1)}  R@3 ${pct(s.recallAt3)}  R@10 ${pct(s.recallAt10)}  MRR@10 ${s.mrrAt10.toFixed(3)}`;
  const misses = queries
    .filter((query) => scores.ranks.get(query.id)! > 3)
    .map((query) => {
      const at = scores.ranks.get(query.id)!;
      return `${query.id} (${Number.isFinite(at) ? `#${at}` : '>10'})`;
    });
  return [
    `  a server's name as a word of the request (${WORD_QUERIES_FILE}):`,
    line('all', scores.all),
    line('ordinary word', sense('word')),
    line('names server', sense('name')),
    `  not in the top 3: ${misses.join(', ') || 'none'}`,
  ];
}

/** The second query set: the first discover-all-tools query a blind agent wrote per task (bench/agentQueries.ts). */
export const AGENT_QUERIES_FILE = 'agent-queries.json';

/** The agent-written queries, if the set has them; they must cover the same tasks as queries.json. */
export function loadAgentQueries(dir = searchDevDir()): DevQuery[] | undefined {
  const file = path.join(dir, AGENT_QUERIES_FILE);
  if (!existsSync(file)) return undefined;
  const { queries } = JSON.parse(readFileSync(file, 'utf8')) as { queries: DevQuery[] };
  const tasks = (JSON.parse(readFileSync(path.join(dir, 'queries.json'), 'utf8')) as { queries: DevQuery[] }).queries;
  const same = (a: DevQuery, b: DevQuery) =>
    a.id === b.id && a.expected.join() === b.expected.join() && Boolean(a.hard) === Boolean(b.hard);
  if (queries.length !== tasks.length || queries.some((query, index) => !same(query, tasks[index]!)))
    throw new Error(`${file} must hold the tasks of queries.json, in order, with the same expected tools`);
  return queries;
}

/** The set's catalog as enabled catalog tools, and its queries. */
export function loadDevSet(dir = searchDevDir()): { tools: CatalogTool[]; queries: DevQuery[] } {
  const read = (file: string): unknown => {
    try {
      return JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    } catch (error) {
      throw new Error(
        `Cannot read the search dev set at ${dir} (${file}); set LOADOUT_SEARCH_DEV to a folder holding catalog.json and queries.json: ${String(error)}`,
      );
    }
  };
  const catalog = read('catalog.json') as { servers: Record<string, { tools: Tool[] }> };
  const { queries } = read('queries.json') as { queries: DevQuery[] };
  const tools = Object.entries(catalog.servers).flatMap(([server, { tools: definitions }]) =>
    definitions.map((definition) => catalogToolOf(server, definition)),
  );
  return { tools, queries };
}

/** A recorded definition as an enabled catalog tool. */
export function catalogToolOf(server: string, definition: Tool): CatalogTool {
  return {
    id: `${server}.${definition.name}`,
    server,
    name: definition.name,
    definition,
    description: definition.description ?? '',
    enabled: true,
    changed: false,
    blocked: false,
  };
}

/** Recall at 1, 3 and 10 and MRR@10 of one subset. */
export interface DevScores {
  n: number;
  recallAt1: number;
  recallAt3: number;
  recallAt10: number;
  mrrAt10: number;
}

/** Score a ranking function on the set: a hit at k is any expected tool among the first k. */
export function scoreDevSet(
  queries: readonly DevQuery[],
  rank: (query: string, task: DevQuery) => string[],
): { all: DevScores; hard: DevScores; notHard: DevScores; ranks: Map<string, number> } {
  const ranks = new Map<string, number>();
  for (const query of queries) {
    const ids = rank(query.query, query).slice(0, 10);
    const hits = query.expected.map((id) => ids.indexOf(id)).filter((index) => index >= 0);
    ranks.set(query.id, hits.length ? Math.min(...hits) + 1 : Infinity);
  }
  const scores = (subset: readonly DevQuery[]): DevScores => {
    const n = subset.length || 1;
    const at = (k: number) => subset.filter((query) => ranks.get(query.id)! <= k).length / n;
    const mrr = subset.reduce((sum, query) => sum + (ranks.get(query.id)! <= 10 ? 1 / ranks.get(query.id)! : 0), 0) / n;
    return { n: subset.length, recallAt1: at(1), recallAt3: at(3), recallAt10: at(10), mrrAt10: mrr };
  };
  return {
    all: scores(queries),
    hard: scores(queries.filter((query) => query.hard)),
    notHard: scores(queries.filter((query) => !query.hard)),
    ranks,
  };
}

/** The weak-match notice against the truth: shown with the right tool in the top 3 (false alarm), or not shown without it (miss). */
export interface NoticeScores {
  n: number;
  shown: number;
  falseAlarms: number;
  misses: number;
}

/** How the weak-match notice did on the set, for a search that answers ids (best first) and whether it matched strongly. */
export function scoreNotice(queries: readonly DevQuery[], search: (query: string) => { ids: string[]; strong: boolean }): NoticeScores {
  const scores: NoticeScores = { n: queries.length, shown: 0, falseAlarms: 0, misses: 0 };
  for (const query of queries) {
    const { ids, strong } = search(query.query);
    const inTop3 = query.expected.some((id) => ids.slice(0, 3).includes(id));
    if (!strong) scores.shown++;
    if (!strong && inTop3) scores.falseAlarms++;
    if (strong && !inTop3) scores.misses++;
  }
  return scores;
}
