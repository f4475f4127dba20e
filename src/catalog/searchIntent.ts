// What a query asks for beyond its words. A question wants to be told something, so tools that
// change nothing are preferred for it; whether a tool changes things comes from the server's
// readOnlyHint when it sends one, else from the verb its name starts with. And values the user
// pastes (a path, an issue key, a #channel) name the kind of thing the tool must take.
import type { CatalogTool } from './catalogTool.js';
import { wordsOf } from './searchText.js';

// How people open a request for information (a trailing question mark counts as well).
const QUESTION_OPENING = /^\s*(which|what|how|who|when|where|why|whose|is|are|was|were|does|do|did|has|have|show|list)\b/i;

// Verbs that tool names use for changing something (create_issue, deleteMessage, mute-host).
// A name that starts with none of them is taken to read: get, list, search, find, query, ….
const WRITE_VERBS = new Set(
  (
    'create update delete remove add set edit write move rename send post reply archive unarchive mute unmute schedule ' +
    'cancel run rerun drop insert assign toggle trigger login logout rotate complete close'
  ).split(' '),
);

/** True for a query that asks to be told something rather than to have something done. */
export function isQuestion(query: string): boolean {
  return /\?\s*$/.test(query) || QUESTION_OPENING.test(query);
}

/**
 * False for a tool that changes things: the server's `readOnlyHint` when it sends one, else a
 * name whose first verb (after a server prefix such as `asana_` or `linear_`) is a write verb.
 */
export function readsOnly(tool: CatalogTool): boolean {
  const hint = tool.definition.annotations?.readOnlyHint;
  if (hint !== undefined) return hint;
  const words = wordsOf(tool.name, { whole: false });
  const prefixed = words.length > 1 && !WRITE_VERBS.has(words[0]!) && tool.server.includes(words[0]!);
  return !WRITE_VERBS.has((prefixed ? words[1] : words[0]) ?? '');
}

/**
 * Values people paste into a request, by the kind of thing each one is. The value's own words are
 * the user's data ("reports/2024/q3", "ENG-412"), and would match tools by accident; its kind
 * ("path", "issue") is what a tool's parameters and description speak of. First match wins.
 */
// File name extensions people paste (config, data, documents, code, images, archives).
const FILE_EXTENSIONS =
  'json|jsonc|ya?ml|toml|ini|env|txt|md|log|csv|tsv|html?|css|js|ts|py|sh|sql|xml|pdf|png|jpe?g|gif|svg|webp|zip|lock';

const VALUE_KINDS: readonly [RegExp, string][] = [
  [/\b[a-z][a-z0-9+.-]*:\/\/\S+/giu, 'url'],
  [/\b[\w.+-]+@[\w-]+\.[\w.-]+/gu, 'email'],
  // An issue tracker's key: team or project prefix, dash, number (Jira, Linear, YouTrack).
  [/\b[A-Z][A-Z0-9]{1,9}-\d+\b/gu, 'issue'],
  [/(?<=^|\s)#[\w-]+/gu, 'channel'],
  // A file name, bare or at the end of a path (config.yaml, ~/Pictures/cat.png): a file.
  [new RegExp(`(?<=^|[\\s(])~?[\\w./-]*\\.(?:${FILE_EXTENSIONS})\\b`, 'giu'), 'file'],
  [/(?<=^|[\s(])~?[\w.-]*\/[\w./-]+/gu, 'path'],
];

/** `query` with each pasted value replaced by the word for its kind. */
export function withValueKinds(query: string): string {
  return VALUE_KINDS.reduce((text, [pattern, kind]) => text.replace(pattern, ` ${kind} `), query);
}
