// The words search works on: splitting tool names and prose into lowercase words, the stop list
// (English function words and chat filler), the light stemmer, a tool's text by field (shared descriptions
// left out), and how much two word sets overlap.
import type { CatalogTool } from './catalogTool.js';

// English function words plus what people wrap a request in ("can you please…", "I need to…").
// They carry no meaning about which tool is wanted, and with rarity weighting a filler word that
// happens to be rare in the catalog ("want") would otherwise outrank the words that matter.
const STOP_WORDS = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each few for from further had has have having he her here hers herself ' +
    'him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or ' +
    'other our ours ourselves out over own same she should so some such than that the their theirs them themselves then ' +
    'there these they this those through to too under until up very was we were what when where which while who whom why ' +
    'will with would you your yours yourself yourselves ' +
    // chat filler
    'please pls want wanna need needs needed let lets like would could might must may shall kindly help hey hi hello ' +
    'thanks thank ok okay also currently right thing things something stuff somehow actually really basically im ive id ' +
    'youre dont doesnt cant wont us one ones many much anything everything every etc via using use ' +
    // the web's top-level domain, as in monday.com
    'com'
  ).split(' '),
);

/** The longest word kept; longer runs are ids, hashes or noise. */
const MAX_WORD_LENGTH = 40;

/**
 * Lowercase words of `text`: camelCase, snake_case, kebab-case, dots and digits split apart. A
 * word that case alone split in two also keeps its whole form ("MySQL" gives mysql, my, sql;
 * "GitHub" github, git, hub): product names are asked for whole, and a part can be a stop word.
 * `whole: false` gives the parts only (a name read as a verb and its object).
 */
export function wordsOf(text: string, { whole = true }: { whole?: boolean } = {}): string[] {
  // Most tool text is ASCII, and ASCII classes are several times faster than Unicode properties
  // (tokenizing is most of an index build at 10k tools).
  const ascii = /^[\x00-\x7f]*$/.test(text);
  const words = ascii
    ? text
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/([A-Z])([A-Z][a-z])/g, '$1 $2')
        .toLowerCase()
        .split(/[^a-z0-9]+/)
    : text
        .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
        .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u);
  // Whole forms follow the parts: only words with a case change inside need a second look.
  if (whole && (ascii ? /[a-z][A-Z]|[A-Z][A-Z][a-z]/ : /\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}/u).test(text)) {
    for (const run of text.split(ascii ? /[^A-Za-z]+/ : /[^\p{L}]+/u)) if (splitsInTwo(run, ascii)) words.push(run.toLowerCase());
  }
  return words.filter((word) => word.length > 0 && word.length <= MAX_WORD_LENGTH);
}

// "MySQL", "GitHub", "readFile": one case change inside the word, so two parts.
function splitsInTwo(run: string, ascii: boolean): boolean {
  const changes = ascii ? run.match(/[a-z][A-Z]|[A-Z](?=[A-Z][a-z])/g) : run.match(/\p{Ll}\p{Lu}|\p{Lu}(?=\p{Lu}\p{Ll})/gu);
  return changes?.length === 1;
}

/** True for words that say nothing about which tool is wanted. */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word) || (word.length === 1 && !/\p{N}/u.test(word));
}

/** Meaning-bearing words of `text`, unstemmed (the form word vectors know). */
export function contentWordsOf(text: string): string[] {
  return wordsOf(text).filter((word) => !isStopWord(word));
}

/**
 * A light stemmer: plurals, -ing and -ed, and a final e, so "creating", "created", "creates" and
 * "create" meet. Deliberately not Porter: it over-stems tool words (organization → organ).
 */
export function stem(word: string): string {
  let base = stems.get(word);
  if (base === undefined) {
    base = stemUncached(word);
    if (stems.size >= STEM_CACHE_SIZE) stems.clear();
    stems.set(word, base);
  }
  return base;
}

// Tool text repeats its words a lot; the cache makes stemming a lookup.
const STEM_CACHE_SIZE = 50_000;
const stems = new Map<string, string>();

function stemUncached(word: string): string {
  if (word.length <= 3 || /\p{N}/u.test(word)) return word;
  let base = word;
  if (base.endsWith('ies') && base.length > 4) base = `${base.slice(0, -3)}y`;
  else if (base.endsWith('sses')) base = base.slice(0, -2);
  else if (base.endsWith('s') && !/(ss|us|is)$/.test(base)) base = base.slice(0, -1);
  if (base.endsWith('ing') && base.length > 5) base = undouble(base.slice(0, -3));
  else if (base.endsWith('ed') && base.length > 4) base = undouble(base.slice(0, -2));
  if (base.endsWith('e') && base.length > 3) base = base.slice(0, -1);
  return base;
}

function undouble(base: string): string {
  return /([^aeiouls])\1$/.test(base) ? base.slice(0, -1) : base;
}

/** Stemmed content words: the lexical index's terms. */
export function termsOf(text: string): string[] {
  return contentWordsOf(text).map(stem);
}

/** The content words (unstemmed) of each field of a tool: what both indexes are built from. */
export type ToolWords = Record<SearchField, string[]>;

export function toolWordsOf(text: ToolText): ToolWords {
  return Object.fromEntries(SEARCH_FIELDS.map((field) => [field, text[field] ? contentWordsOf(text[field]) : []])) as ToolWords;
}

/** The searchable fields of a tool. */
export const SEARCH_FIELDS = ['name', 'title', 'server', 'about', 'description', 'params', 'keywords', 'examples', 'learned'] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];
export type ToolText = Record<SearchField, string>;

/** Extra words for tools, by tool id, from the user and from use. */
export interface ToolVocabulary {
  /** `keywords:` of the tool in servers.yaml and the user's synonyms applied to the tool. */
  keywords?: ReadonlyMap<string, string>;
  /** Words of queries that led to the tool. */
  learned?: ReadonlyMap<string, string>;
  /** Example requests a model wrote for the tool (`loadout enrich`). */
  examples?: ReadonlyMap<string, string>;
  /** What each server says it is for (its title, description, instructions), by server name. */
  servers?: ReadonlyMap<string, string>;
  /** The names a server goes by beyond its key (its title), by server name: searched like the key. */
  serverNames?: ReadonlyMap<string, string>;
}

/** The text of each search field of a tool. */
export function toolTextOf(tool: CatalogTool, vocabulary: ToolVocabulary = {}): ToolText {
  const { definition } = tool;
  const params = { words: [] as string[], length: 0 };
  collectSchemaText(definition.inputSchema, params, 0);
  return {
    name: tool.name,
    title: [definition.title, definition.annotations?.title].filter(Boolean).join(' '),
    server: serverNameText(tool.server, vocabulary),
    about: vocabulary.servers?.get(tool.server) ?? '',
    description: levelled(tool.description),
    params: params.words.join(' '),
    keywords: vocabulary.keywords?.get(tool.id) ?? '',
    examples: vocabulary.examples?.get(tool.id) ?? '',
    learned: vocabulary.learned?.get(tool.id) ?? '',
  };
}

/** A server's names, each on its own: its key, and its title when it gives one. */
export function serverNamesOf(server: string, vocabulary: ToolVocabulary = {}): string[] {
  const title = vocabulary.serverNames?.get(server);
  return title ? [server, title] : [server];
}

/** What a server is named by: its key and the names it gives itself. */
export function serverNameText(server: string, vocabulary: ToolVocabulary = {}): string {
  return serverNamesOf(server, vocabulary).join(' ');
}

// Sentences that rank a tool by how loudly it asks to be used rather than by what it does:
// "MUST be called before any other tool", "the primary entry point", "MANDATORY FIRST STEP".
const SELF_PROMOTION =
  /\b(mandatory|required first|must (always )?be (called|used|run)|always (call|use|run) this|call this (tool )?first|use this (tool )?(first|before)|before (calling |using )?any other|primary entry point|main entry point|the entry point|first step|start here|recommended starting point)\b/i;
// Shouting: words in capitals that demand rather than describe.
const SHOUTING = /\b(IMPORTANT|CRITICAL|MANDATORY|REQUIRED|MUST|ALWAYS|NEVER)\b/;
const EMOJI = /[\p{Extended_Pictographic}\u{1F1E6}-\u{1F1FF}\u{FE0F}\u{200D}]/gu;

/**
 * A description on a level field for ranking: emoji and sentences of self-promotion or shouting
 * taken out (the agent still reads the original). A description that is nothing else is kept.
 */
export function levelled(description: string): string {
  const loud = (text: string) => SELF_PROMOTION.test(text) || SHOUTING.test(text);
  if (!loud(description) && !/[^\x00-\x7f]/.test(description)) return description;
  const plain = description.replace(EMOJI, ' ');
  const sentences = plain.split(/(?<=[.!?:])\s+|\n+/);
  const kept = sentences.filter((sentence) => !loud(sentence));
  return kept.length ? kept.join(' ') : plain;
}

/** Deep enough for the nested objects real tools take (filters, options), not for recursive schemas. */
const MAX_SCHEMA_DEPTH = 4;
const MAX_PARAM_TEXT = 2000;

/** Property names and their descriptions, nested ones included, up to a size a tool earns. */
function collectSchemaText(schema: unknown, out: { words: string[]; length: number }, depth: number): void {
  if (depth > MAX_SCHEMA_DEPTH || !isRecord(schema) || out.length > MAX_PARAM_TEXT) return;
  if (isRecord(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      const description = isRecord(property) && typeof property.description === 'string' ? property.description : '';
      out.words.push(name, description);
      out.length += name.length + description.length + 2;
      collectSchemaText(property, out, depth + 1);
    }
  }
  collectSchemaText(schema.items, out, depth + 1);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const variants = schema[key];
    if (Array.isArray(variants)) for (const variant of variants) collectSchemaText(variant, out, depth + 1);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Tools of one server that share one description (a generated server's "Call the API") are told
// apart by their names and parameters: the shared text is not ranked.
const SHARED_DESCRIPTION_TOOLS = 3;

/** `texts` (of `tools`, index for index) with each description that three or more tools of one server share left empty. */
export function withSharedDescriptionsDropped(tools: readonly CatalogTool[], texts: ToolText[]): ToolText[] {
  const keys = texts.map((text, index) => (text.description ? `${tools[index]!.server}\n${text.description}` : undefined));
  const counts = new Map<string, number>();
  for (const key of keys) if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  keys.forEach((key, index) => {
    if (key !== undefined && counts.get(key)! >= SHARED_DESCRIPTION_TOOLS) texts[index]!.description = '';
  });
  return texts;
}

/** Jaccard overlap of two word sets. */
export function wordOverlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let common = 0;
  for (const word of b) if (a.has(word)) common++;
  return common / (a.size + b.size - common || 1);
}
