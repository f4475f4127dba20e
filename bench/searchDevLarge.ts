// The large tool-search development set (test/fixtures/search-dev-large): 3,009 real tools from
// 108 npm servers with what each server says about itself, and 60 tasks in users' own words. The
// catalog is built as loadout builds its own (servers' titles and descriptions searched with their
// tools), and scored on all tasks, the odd-numbered ones (tuned on) and the even ones (held out).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Tool } from '@modelcontextprotocol/server';
import { Catalog, type CachedServerTools, type ServerMapEntry } from '../src/catalog/index.js';
import { summarizeServer } from '../src/catalog/serverMap.js';
import { ServerConfigSchema } from '../src/config/index.js';
import {
  AGENT_QUERIES_FILE,
  loadAgentQueries,
  loadWordQueries,
  scoreDevSet,
  scoreNotice,
  searchDevDir,
  wordQueryRows,
  type DevQuery,
  type DevScores,
} from './searchDevSet.js';

/** Where the set lives: LOADOUT_SEARCH_DEV_LARGE, else beside the small set. */
export function largeDevDir(): string {
  return process.env.LOADOUT_SEARCH_DEV_LARGE
    ? path.resolve(process.env.LOADOUT_SEARCH_DEV_LARGE)
    : path.join(path.dirname(searchDevDir()), 'search-dev-large');
}

interface HarvestedServer {
  package: string;
  version: string;
  about?: CachedServerTools['about'];
  tools: Tool[];
}

/** The set's servers as recorded, its catalog as loadout builds it, and its tasks. */
export function loadLargeDevSet(dir = largeDevDir()): { servers: Record<string, HarvestedServer>; catalog: Catalog; queries: DevQuery[] } {
  const { servers } = JSON.parse(gunzipSync(readFileSync(path.join(dir, 'catalog.json.gz'))).toString('utf8')) as {
    servers: Record<string, HarvestedServer>;
  };
  const { queries } = JSON.parse(readFileSync(path.join(dir, 'queries.json'), 'utf8')) as { queries: DevQuery[] };
  const config = ServerConfigSchema.parse({ command: 'node' });
  const catalog = Catalog.build({
    configs: Object.fromEntries(Object.keys(servers).map((server) => [server, config])),
    definitions: Object.fromEntries(
      Object.entries(servers).map(([server, { about, tools }]) => [
        server,
        { discoveredAt: 'dev set', tools, ...(about ? { about } : {}) },
      ]),
    ),
  });
  return { servers, catalog, queries };
}

/**
 * `count` map entries with the names a team's catalog has: the large set's 108 servers as harvested
 * (their summaries from their tools), then the other packages the harvest tried, named as it names
 * them (the package less "mcp" and "server"), then second and third accounts of the same servers
 * (`postgres-2`, as the harvest names a second package for one product), in the set's order.
 */
export function realisticMapEntries(count: number, dir = largeDevDir()): ServerMapEntry[] {
  const { servers } = loadLargeDevSet(dir);
  const entries: ServerMapEntry[] = Object.entries(servers).map(([server, { tools, about }]) => ({
    server,
    summary: summarizeServer(server, { tools, ...(about ? { about } : {}) }),
    state: { kind: 'ready' },
  }));
  const taken = new Set(entries.map((entry) => entry.server));
  const unique = (name: string) => {
    let server = name;
    for (let copy = 2; taken.has(server); copy++) server = `${name}-${copy}`;
    taken.add(server);
    return server;
  };
  const harvested = new Set(Object.values(servers).map((server) => server.package));
  for (const pkg of readFileSync(path.join(dir, 'packages.txt'), 'utf8').split('\n').filter(Boolean)) {
    if (harvested.has(pkg)) continue;
    const [scope = '', rest = ''] = pkg.startsWith('@') ? pkg.slice(1).split('/') : ['', pkg];
    const server = unique(
      rest
        .split('-')
        .filter((word) => word !== 'mcp' && word !== 'server')
        .join('-') || scope,
    );
    entries.push({ server, summary: { server, purpose: '', tools: 0 }, state: { kind: 'ready' } });
  }
  const firsts = entries.slice();
  for (let index = 0; entries.length < count; index++) {
    const first = firsts[index % firsts.length]!;
    const server = unique(first.server.replace(/-\d$/, ''));
    entries.push({ ...first, server, ...(first.summary ? { summary: { ...first.summary, server } } : {}) });
  }
  return entries.slice(0, count);
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`.padStart(7);
const line = (label: string, s: DevScores) =>
  `  ${label.padEnd(16)} n=${String(s.n).padStart(2)}  R@1 ${pct(s.recallAt1)}  R@3 ${pct(s.recallAt3)}  R@10 ${pct(s.recallAt10)}  MRR@10 ${s.mrrAt10.toFixed(3)}`;

/** The bench's rows for the large set. */
export function largeSetRows(): string[] {
  const { catalog, queries } = loadLargeDevSet();
  const rank = (query: string) => catalog.search({ query, limit: 10, offset: 0 }).tools.map((tool) => tool.id);
  const parity = (remainder: number) => queries.filter((query) => Number(query.id.replace(/\D/g, '')) % 2 === remainder);
  const all = scoreDevSet(queries, rank);
  const odd = scoreDevSet(parity(1), rank).all;
  const even = scoreDevSet(parity(0), rank).all;
  const notice = scoreNotice(queries, (query) => {
    const { tools, strong } = catalog.search({ query, limit: 10, offset: 0 });
    return { ids: tools.map((tool) => tool.id), strong };
  });
  const met = all.all.recallAt3 >= 0.55 && all.all.recallAt10 >= 0.75 && Math.abs(odd.recallAt3 - even.recallAt3) <= 0.05;
  const misses = queries
    .filter((query) => all.ranks.get(query.id)! > 3)
    .map((query) => `${query.id} (${rankText(all.ranks.get(query.id)!)})`);
  return [
    `large dev set: ${catalog.visible().length} tools from ${catalog.servers().length} servers, ${queries.length} tasks in users' words (${largeDevDir()})`,
    line('all', all.all),
    line('odd (tuned)', odd),
    line('even (held out)', even),
    `  targets R@3 ≥ 55 %, R@10 ≥ 75 %, halves within 5 points at 3: ${met ? 'met' : 'not met'}`,
    `  weak-match notice: shown ${notice.shown}/${notice.n}, false alarms ${notice.falseAlarms}, misses ${notice.misses}`,
    `  not in the top 3: ${misses.join(', ') || 'none'}`,
    ...agentRows(catalog),
    ...wordQueryRows(loadWordQueries(largeDevDir()) ?? [], rank),
  ];
}

/** The large set's agent-written queries (agent-queries.json, see bench/agentQueries.ts), with their server filters. */
function agentRows(catalog: Catalog): string[] {
  const agent = loadAgentQueries(largeDevDir());
  if (!agent) return [`  agent-written queries: none yet (write ${AGENT_QUERIES_FILE} with node dist/bench/agentQueries.js prompt large)`];
  const scores = scoreDevSet(agent, (query, task) =>
    catalog.search({ query, server: task.server, limit: 10, offset: 0 }).tools.map((tool) => tool.id),
  );
  const misses = agent
    .filter((query) => scores.ranks.get(query.id)! > 3)
    .map((query) => `${query.id} (${rankText(scores.ranks.get(query.id)!)})`);
  return [
    `  agent-written queries (${agent.filter((query) => query.server).length} with a server filter):`,
    line('all', scores.all),
    `  target, agent-written: right tool in the top 3 ≥ 95 %: ${scores.all.recallAt3 >= 0.95 ? 'met' : 'not met'}; not in the top 3: ${misses.join(', ') || 'none'}`,
  ];
}

function rankText(rank: number): string {
  return Number.isFinite(rank) ? `#${rank}` : '>10';
}
