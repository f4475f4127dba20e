// What a query searches for: its content words without the user's data (quoted text, numbers,
// pasted values become the word for their kind), the product names it says in another form
// ("Google Cloud" is gcp), the built-in request vocabulary's words for it, and its identity for
// remembering it.
import { REQUEST_WORDS } from './requestWords.js';
import { productAliasesOf } from './productNames.js';
import { withValueKinds } from './searchIntent.js';
import { contentWordsOf, stem } from './searchText.js';

/** The most query words considered; a pasted paragraph is cut, not refused. */
const MAX_QUERY_WORDS = 32;
// The most query characters read: room for MAX_QUERY_WORDS long words and the values pasted among
// them, and a bound on the pattern matching of pasted values, whose cost grows with the square of
// a pathological run ("a.a.a.…" tries every word start as an email address or a file name).
const MAX_QUERY_CHARS = 2000;

/**
 * The content words of a query, without what is the user's data rather than a description of the
 * tool wanted: quoted text ('Write launch blog post') and bare numbers (ids, counts, years) are
 * dropped, and pasted values (paths, issue keys, #channels, URLs) become the word for their kind.
 */
export function queryWordsOf(query: string): string[] {
  return contentWordsOf(requestTextOf(query)).filter((word) => !/^\p{N}+$/u.test(word));
}

/** The query's text without quoted text, and with each pasted value replaced by the word for its kind. */
export function requestTextOf(query: string): string {
  const unquoted = query.slice(0, MAX_QUERY_CHARS).replace(/(^|[\s(])(['"‘“])[^'"‘’“”]*?['"’”](?=$|[\s.,;:!?)])/gu, '$1');
  return withValueKinds(unquoted);
}

/** For each query word in the built-in request vocabulary, the tool words it stands for (none at weight 0). */
export function meantWordsOf(words: readonly string[], weight: number): Map<string, readonly string[]> {
  const meant = new Map<string, readonly string[]>();
  if (weight <= 0) return meant;
  for (const word of words) {
    const tools = REQUEST_WORDS.get(word) ?? REQUEST_WORDS.get(stem(word));
    if (tools) meant.set(word, tools);
  }
  return meant;
}

/** A query's identity for remembering it: its content words' stems, sorted, once each. */
export function queryKeyOf(query: string): string {
  return [...new Set(queryWordsOf(query).slice(0, MAX_QUERY_WORDS).map(stem))].sort().join(' ');
}

/** The words a query asks with (cut to MAX_QUERY_WORDS), and the other names of the products it names. */
export function askedWordsOf(query: string): { asked: string[]; aliases: string[] } {
  const asked = queryWordsOf(query).slice(0, MAX_QUERY_WORDS);
  return { asked, aliases: productAliasesOf(asked).filter((word) => !asked.includes(word)) };
}
