// Whether a query uses a server's name as the server's name. A name that is no ordinary word
// ("asana", "datadog") names the server wherever it stands; one that is also an ordinary word
// ("time", "plane", "memory", "fetch") does only where the query uses it as a name: after "in",
// "on", "from", "with"…, before "server", "app"…, capitalized inside a sentence, as the whole of a
// name of several words ("google drive"), in a `server.tool` form, or at a telegraphic start
// ("save memory of…"). It decides nothing else: what naming earns a server is nameBoosts.ts's.
import { isStopWord, stem, wordsOf } from './searchText.js';

/** One word of the query as written: its lowercase form, its stem, and whether a capital marks it as a name. */
interface QueryToken {
  word: string;
  stem: string;
  /** Written with a capital, not at the start of a sentence. */
  capitalized: boolean;
}

/** A query read for names: its words in order, and its raw lowercase text (for `server.tool` forms). */
export interface NamingQuery {
  tokens: readonly QueryToken[];
  lower: string;
}

/** A server's names: each as its content words in order (its key, its title), lowercase. */
export type ServerNames = readonly (readonly string[])[];

// Words before a name that make it one: "in Teams", "from my Notion", "with Brave", "on Plane".
const NAMING_BEFORE = new Set(['in', 'on', 'from', 'using', 'use', 'via', 'with', 'through', 'into', 'to', 'inside']);
// Words that may stand between such a word and the name: "in the Plane project", "from our Notion".
const BETWEEN = new Set(['the', 'my', 'our', 'your', 'their', 'this', 'that']);
// Words that make the next one an ordinary noun rather than a name at the start ("Fetch the weather").
const DETERMINERS = new Set([...BETWEEN, 'a', 'an', 'these', 'those', 'some', 'any', 'all', 'every']);
// Words after a name that make it one: "the time server", "plane app", "memory mcp".
const NAMING_AFTER = new Set([
  'server',
  'servers',
  'mcp',
  'app',
  'api',
  'tool',
  'tools',
  'account',
  'workspace',
  'instance',
  'integration',
]);
// Most of a query's words capitalized ("Create Plane Issue"): capitals then say nothing of names.
const TITLE_CASE_SHARE = 0.5;

/** The query's words with what naming looks at. */
export function namingQueryOf(query: string): NamingQuery {
  const tokens: QueryToken[] = [];
  let sentenceStart = true;
  for (const match of query.matchAll(/[\p{L}\p{N}]+|[.!?:;]\s|\n/gu)) {
    const text = match[0];
    if (!/[\p{L}\p{N}]/u.test(text.charAt(0))) {
      sentenceStart = true;
      continue;
    }
    const capital = /\p{Lu}/u.test(text.charAt(0));
    for (const word of wordsOf(text, { whole: false })) tokens.push({ word, stem: stem(word), capitalized: capital && !sentenceStart });
    sentenceStart = false;
  }
  const capitals = tokens.filter((token) => token.capitalized).length;
  const titleCase = tokens.length > 2 && capitals / (tokens.length - 1) > TITLE_CASE_SHARE;
  return { tokens: titleCase ? tokens.map((token) => ({ ...token, capitalized: false })) : tokens, lower: query.toLowerCase() };
}

/**
 * Whether the query names the server `key` with `names` (its key's and title's words), where
 * `ordinary(word)` says a word is also an everyday word, which names only where used as a name.
 */
export function namesServer(query: NamingQuery, key: string, names: ServerNames, ordinary: (word: string) => boolean): boolean {
  if (dottedForm(query.lower, key)) return true;
  const { tokens } = query;
  for (const name of names) {
    const stems = name.map(stem);
    for (let at = 0; at < tokens.length; at++) {
      const index = stems.indexOf(tokens[at]!.stem);
      if (index < 0) continue;
      if (!ordinary(name[index]!)) return true;
      if (usedAsName(tokens, at, stems.length === 1)) return true;
      if (stems.length > 1 && index === 0 && wholeRun(tokens, at, stems)) return true;
    }
  }
  return false;
}

// `time.convert_time`, `monday.com`: the key written as the owner of what follows the dot.
function dottedForm(lower: string, key: string): boolean {
  const at = lower.indexOf(`${key}.`);
  if (at < 0) return false;
  const before = lower.charAt(at - 1);
  return (at === 0 || !/[\p{L}\p{N}.-]/u.test(before)) && /\p{L}/u.test(lower.charAt(at + key.length + 1));
}

// `whole`: the word is the server's whole name, so a telegraphic start says it ("memory: save…",
// "save memory of…", "search notion for…"), where a sentence would put an article first ("Fetch the weather").
function usedAsName(tokens: readonly QueryToken[], at: number, whole: boolean): boolean {
  const token = tokens[at]!;
  if (token.capitalized) return true;
  if (whole) {
    const next = tokens[at + 1]?.word;
    if (at === 0 && next !== undefined && !DETERMINERS.has(next)) return true;
    if (at === 1 && !isStopWord(tokens[0]!.word)) return true;
  }
  if (NAMING_AFTER.has(tokens[at + 1]?.word ?? '')) return true;
  let before = at - 1;
  while (before >= 0 && at - before <= 2 && BETWEEN.has(tokens[before]!.word)) before--;
  return before >= 0 && NAMING_BEFORE.has(tokens[before]!.word);
}

// Every word of a name of several words, in order, with only stop words between: "google drive", "brave search".
function wholeRun(tokens: readonly QueryToken[], at: number, stems: readonly string[]): boolean {
  let next = at;
  for (const wanted of stems) {
    while (next < tokens.length && tokens[next]!.stem !== wanted && isStopWord(tokens[next]!.word)) next++;
    if (tokens[next]?.stem !== wanted) return false;
    next++;
  }
  return true;
}
