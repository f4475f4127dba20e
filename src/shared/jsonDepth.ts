// How deep a JSON message may nest, and the check of a message's text against it, made before it
// is parsed: one linear scan, no recursion, no second parse. Every intake of JSON text from a
// peer (HTTP bodies, stdio lines from clients and from downstream servers) uses this one check.

/**
 * How deep a message's arrays and objects may nest. A value far deeper (JSON.parse reads
 * 1,000,000 levels) overflows the stack of whatever walks it next (JSON.stringify, a digest, the
 * SDK's encoding); real MCP messages nest a few dozen levels at most.
 */
export const MAX_JSON_DEPTH = 1000;

const OPEN_BRACKET = 0x5b; // [
const OPEN_BRACE = 0x7b; // {
const CLOSE_BRACKET = 0x5d; // ]
const CLOSE_BRACE = 0x7d; // }
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/** Whether JSON `text` nests arrays and objects deeper than `limit` (brackets inside strings do not count). */
export function nestedDeeperThan(text: string, limit: number = MAX_JSON_DEPTH): boolean {
  // Each level takes at least two characters: a shorter text cannot be that deep, and is not scanned.
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (char === QUOTE) {
      // A string is skipped with indexOf (native), not a character at a time: a scan of a result's
      // long text cost three times its JSON.parse that way.
      index = closingQuote(text, index);
      if (index === -1) return false;
    } else if (char === OPEN_BRACKET || char === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (char === CLOSE_BRACKET || char === CLOSE_BRACE) depth--;
  }
  return false;
}

// Where the string opened at `open` ends: the next quote not escaped (after an even run of backslashes), or -1.
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  while (end !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return -1;
}
