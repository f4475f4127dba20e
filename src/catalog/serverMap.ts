// The map of the catalog: one short line per configured server (its name, what it is for, how
// many tools it has, and its state unless ready), so an agent knows which servers exist before it
// searches and can pass `server`. What a server is for comes from its own words (serverInfo
// description or title, instructions) when it gave any, else from the words its tool names share.
import { serverProblemText, type ServerProblem } from '../config/index.js';
import type { CachedServerTools } from './definitionCache.js';
import { isStopWord, stem, wordsOf } from './searchText.js';
import { GROUP_ORDER, groupOf } from './serverGroups.js';

/**
 * Where a configured server stands: discovered, not yet discovered, failed to be discovered, or
 * blocked (no discovery can list it until the user fixes its problem: an invalid entry, an unset variable).
 */
export type ServerState =
  { kind: 'ready' } | { kind: 'pending' } | { kind: 'failed'; reason: string } | { kind: 'blocked'; problem: ServerProblem };

/** What the map says of a discovered server, kept between runs (the map is answered before the catalog is read). */
export interface ServerSummary {
  server: string;
  purpose: string;
  tools: number;
}

/** One line of the map: a server's summary when it has been discovered, and its state. */
export interface ServerMapEntry {
  server: string;
  summary?: ServerSummary;
  state: ServerState;
}

/**
 * The most bytes the map may take in the session's instructions: 35 servers fit a line each at the
 * narrowest purpose width, and 200 servers of the large dev set's names fit grouped, every one named.
 */
export const MAP_BUDGET_BYTES = 2048;
/** The most bytes of the map discover-all-tools {} answers with: the names of about 800 servers. */
export const LISTED_MAP_BUDGET_BYTES = 8192;
// Purpose widths tried, widest first, until the map fits the budget.
const PURPOSE_WIDTHS = [60, 48, 40, 32, 24, 16];
const REASON_WIDTH = 60;
// Said under a map that folds names sharing their first part, so the folding reads as it is meant.
const FOLD_LEGEND = 'Braces join names: jira{,-2,-cloud} is jira, jira-2 and jira-cloud.';
// Words of tool names that say what a tool does, not what it works on: the purpose is the objects.
const ACTION_WORDS = new Set(
  (
    'get list create update delete remove add set search find read write fetch run start stop show open close edit move send post ' +
    'put patch query describe check enable disable toggle trigger generate make new count upload download execute call retrieve view ' +
    'manage insert replace rename save load export import clear reset cancel submit apply assign unassign archive restore attach detach ' +
    'drop take fill click press hover navigate wait evaluate emulate resize select handle simulate allowed sizes ' +
    'batch bulk multiple all by id ids info details detail mcp tool tools with from to for of and or the a an'
  ).split(' '),
);

/** A discovered server's line of the map. */
export function summarizeServer(server: string, cached: Pick<CachedServerTools, 'tools' | 'about'>): ServerSummary {
  return { server, purpose: ownPurpose(server, cached.about) ?? derivedPurpose(server, cached.tools), tools: cached.tools.length };
}

/**
 * The map as lines within `budget` bytes. A small catalog gets one line per server, with the
 * widest purposes that fit. A larger one is grouped by what the servers are for, several servers
 * on a line: with their tool counts when those fit, else by name alone, else with names that share
 * their first part folded (`jira{,-2,-cloud}`). Only a map too long even for that is cut, with a
 * count of the servers left out and where to find them all; `namesBudget` lets the folded names
 * alone take more room than the other forms (discover-all-tools {} names every server that way).
 */
export function formatServerMap(entries: readonly ServerMapEntry[], budget = MAP_BUDGET_BYTES, namesBudget = budget): string[] {
  return serverMapOf(entries, budget, namesBudget).lines;
}

/** The map's lines, and whether they are grouped (`group: servers`) rather than one per server. */
export interface ServerMap {
  lines: string[];
  grouped: boolean;
}

/** The map as formatServerMap gives it, with its form, so a heading can say how to read it. */
export function serverMapOf(entries: readonly ServerMapEntry[], budget = MAP_BUDGET_BYTES, namesBudget = budget): ServerMap {
  for (const width of PURPOSE_WIDTHS) {
    const lines = entries.map((entry) => mapLine(entry, width));
    if (byteLength(lines) <= budget) return { lines, grouped: false };
  }
  // Each server's group is worked out once: the lines are tried with counts, by name, folded, then cut.
  const labels = entries.map((entry) => groupOf(entry.server, entry.summary?.purpose ?? ''));
  for (const form of ['counted', 'named'] as const) {
    const lines = groupedNames(entries, labels, form).map(groupLine);
    if (byteLength(lines) <= budget) return { lines, grouped: true };
  }
  const folded = groupedNames(entries, labels, 'folded');
  const legend = folded.some((group) => group.names.some((name) => name.servers > 1)) ? [FOLD_LEGEND] : [];
  const lines = [...folded.map(groupLine), ...legend];
  const most = Math.max(budget, namesBudget);
  return { lines: byteLength(lines) <= most ? lines : cutMap(folded, entries.length, legend, most), grouped: true };
}

/** A group of the map: its label and its servers, as written (`a (N)`, `a`, or folded `a{,-2}`). */
interface MapGroup {
  label: string;
  names: MapName[];
  separator: string;
}

/** One entry of a group's line: a name, or names folded (`head` and what follows it in each). */
interface MapName {
  text: string;
  servers: number;
  fold?: { head: string; rests: string[] };
}

function groupLine({ label, names, separator }: MapGroup): string {
  return `${label}: ${names.map((name) => name.text).join(separator)}`;
}

/**
 * The groups of servers, in the groups' order; `labels` are the entries' groups, index for index.
 * `counted`: `a (N), b (not discovered)`; `named`: `a b`; `folded`: `a{,-2} b`.
 */
function groupedNames(entries: readonly ServerMapEntry[], labels: readonly string[], form: 'counted' | 'named' | 'folded'): MapGroup[] {
  const groups = new Map<string, ServerMapEntry[]>(GROUP_ORDER.map((label) => [label, []]));
  entries.forEach((entry, index) => groups.get(labels[index]!)!.push(entry));
  return [...groups]
    .filter(([, members]) => members.length)
    .map(([label, members]) => ({
      label,
      separator: form === 'counted' ? ', ' : ' ',
      names:
        form === 'folded' ? foldedNames(members) : members.map((entry) => ({ text: compactName(entry, form === 'counted'), servers: 1 })),
    }));
}

/**
 * Names that share their first part (up to the first '-') written once with the rest in braces,
 * as a shell expands them: `jira{,-2,-cloud}`, `atlassian-{bitbucket,jira}`. A server not
 * discovered keeps its own entry, with its state.
 */
function foldedNames(members: readonly ServerMapEntry[]): MapName[] {
  const byHead = new Map<string, string[]>();
  const items: ({ head: string } | { text: string })[] = [];
  for (const entry of members) {
    if (entry.state.kind === 'failed' || !entry.summary) {
      items.push({ text: compactName(entry, false) });
      continue;
    }
    const head = entry.server.split('-')[0]!;
    const names = byHead.get(head);
    if (names) names.push(entry.server);
    else {
      byHead.set(head, [entry.server]);
      items.push({ head });
    }
  }
  return items.map((item) => {
    if ('text' in item) return { text: item.text, servers: 1 };
    const names = byHead.get(item.head)!;
    if (names.length === 1) return { text: names[0]!, servers: 1 };
    return folded(
      item.head,
      names.map((name) => name.slice(item.head.length)),
    );
  });
}

/** `head{rest,…}`, or `head-{rest,…}` when every rest starts with '-'. */
function folded(head: string, rests: string[]): MapName {
  if (rests.length === 1) return { text: `${head}${rests[0]!}`, servers: 1 };
  const text = rests.every((rest) => rest.startsWith('-'))
    ? `${head}-{${rests.map((rest) => rest.slice(1)).join(',')}}`
    : `${head}{${rests.join(',')}}`;
  return { text, servers: rests.length, fold: { head, rests } };
}

/** The folded groups, name by name, as far as they fit with the notice of the servers left out. */
function cutMap(groups: readonly MapGroup[], total: number, legend: readonly string[], budget: number): string[] {
  const more = (count: number) => `… and ${count} more servers not named here: discover-all-tools {} names them all.`;
  const lines: string[] = [];
  let named = 0;
  for (const group of groups) {
    const kept: MapGroup = { ...group, names: [] };
    const fits = (name: MapName) =>
      byteLength([...lines, groupLine({ ...kept, names: [...kept.names, name] }), ...legend, more(total - named - name.servers)]) <= budget;
    for (const name of group.names) {
      if (!fits(name)) {
        // Of names folded together, as many as fit.
        const rests = name.fold?.rests ?? [];
        let part: MapName | undefined;
        for (let count = 1; count < rests.length && fits(folded(name.fold!.head, rests.slice(0, count))); count++)
          part = folded(name.fold!.head, rests.slice(0, count));
        if (part) {
          kept.names.push(part);
          named += part.servers;
        }
        return [...lines, ...(kept.names.length ? [groupLine(kept)] : []), ...legend, more(total - named)];
      }
      kept.names.push(name);
      named += name.servers;
    }
    lines.push(groupLine(kept));
  }
  return [...lines, ...legend];
}

function compactName({ server, summary, state }: ServerMapEntry, counted: boolean): string {
  if (state.kind === 'failed' || state.kind === 'blocked') return `${server} (not discovered)`;
  if (!summary) return `${server} (discovering)`;
  return counted ? `${server} (${summary.tools})` : server;
}

/** `name (N tools): purpose`, or the state when the server has no tools to show yet. */
function mapLine({ server, summary, state }: ServerMapEntry, width: number): string {
  if (state.kind === 'failed') return `${server}: not discovered (${clip(state.reason, REASON_WIDTH)})`;
  // Whole, fix included: it is what the user has to do, and no retry will.
  if (state.kind === 'blocked') return serverProblemText(server, state.problem);
  if (!summary) return `${server}: not discovered yet`;
  const purpose = clip(summary.purpose, width);
  const count = `${summary.tools} tool${summary.tools === 1 ? '' : 's'}`;
  return `${server} (${count}${state.kind === 'pending' ? ', discovering' : ''})${purpose ? `: ${purpose}` : ''}`;
}

// The server's own words: its description, else the first sentence of its instructions, else a
// title that says more than the server's name.
function ownPurpose(server: string, about: CachedServerTools['about']): string | undefined {
  const own = [about?.description, about?.instructions]
    .map((text) => text && plainPurpose(text))
    .find((purpose) => purpose && !PREAMBLE.test(purpose));
  if (own) return own;
  const title = about?.title?.trim();
  const rest = title
    ? wordsOf(title, { whole: false })
        .filter((word) => word !== 'mcp' && word !== 'server')
        .join('')
    : '';
  return rest && rest !== wordsOf(server, { whole: false }).join('') ? title : undefined;
}

// The opening of instructions written for the model, not a description of the server:
// "Everything Server – Server Instructions Audience: These…", "Usage guide", "You are…".
const PREAMBLE = /\b(instructions?|audience|guidelines?|overview|you are|read (this|me|carefully)|usage guide|how to use)\b|\s[–—]\s/i;

/** The first sentence of `text`, without markdown and without "This server provides …" framing. */
function plainPurpose(text: string): string {
  const flat = text
    .replace(/[`*_#>]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const end = flat.search(/[.!?](\s|$)/);
  const sentence = end >= 0 ? flat.slice(0, end) : flat;
  return sentence
    .replace(/^(this|the|an?)\s+(mcp\s+)?server\s+((provides|offers|exposes|gives|lets you|allows|for|to)\s+)*(access\s+to\s+)?/i, '')
    .replace(/^tools\s+(for|to)\s+/i, '');
}

/** The object words the tool names share most (`issues, projects, teams`), from names only. */
function derivedPurpose(server: string, tools: CachedServerTools['tools']): string {
  const own = new Set(wordsOf(server, { whole: false }).map(stem));
  const counts = new Map<string, { count: number; forms: Map<string, number> }>();
  for (const tool of tools) {
    const seen = new Set<string>();
    for (const word of wordsOf(tool.name, { whole: false })) {
      if (ACTION_WORDS.has(word) || isStopWord(word) || /\d/.test(word)) continue;
      const term = stem(word);
      if (own.has(term) || seen.has(term)) continue;
      seen.add(term);
      let entry = counts.get(term);
      if (!entry) counts.set(term, (entry = { count: 0, forms: new Map() }));
      entry.count++;
      entry.forms.set(word, (entry.forms.get(word) ?? 0) + 1);
    }
  }
  return [...counts.values()]
    .sort((a, b) => b.count - a.count || mostCommon(a.forms).localeCompare(mostCommon(b.forms)))
    .slice(0, 6)
    .map((entry) => mostCommon(entry.forms))
    .join(', ');
}

function mostCommon(forms: ReadonlyMap<string, number>): string {
  return [...forms].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
}

/** `text` cut at a list item or word boundary to at most `width` characters. */
function clip(text: string, width: number): string {
  if (text.length <= width) return text;
  // Whole words only: a whole list item when one ends far enough in, else a whole word, else nothing.
  const cut = text.slice(0, width - 1);
  const item = cut.lastIndexOf(', ');
  const word = /\s/.test(text.charAt(width - 1)) ? cut.length : cut.lastIndexOf(' ');
  const boundary = item > width / 2 ? item : word;
  return boundary > 0 ? `${cut.slice(0, boundary).replace(/[,;:\s]+$/, '')}…` : '';
}

function byteLength(lines: readonly string[]): number {
  return Buffer.byteLength(lines.join('\n'));
}
