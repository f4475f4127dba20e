// The last lines a server wrote to stderr, kept so a failed start can say why (a missing module, a
// bad token) without --log-level debug. Bounded in lines and bytes; the values of the server's
// `${VAR}` references are masked before a line is kept, so the tail can be shown and stored.
import { StringDecoder } from 'node:string_decoder';

const MAX_LINES = 20;
const MAX_BYTES = 4096;
// Colour codes and other control characters make a stored or displayed line unreadable.
const CONTROL = /\u001b\[[0-9;?]*[A-Za-z]|[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** A value to hide in a server's output, and the variable it came from. */
export interface MaskedValue {
  name: string;
  value: string;
}

/** The bounded, masked tail of one child's stderr. */
export class StderrTail {
  readonly #masked: readonly MaskedValue[];
  readonly #decoder = new StringDecoder('utf8');
  #lines: string[] = [];
  #bytes = 0;
  /** The line being written (no newline yet), masked as far as it goes. */
  #partial = '';

  constructor(masked: readonly MaskedValue[]) {
    // Ordered once here, not for every line a chatty server writes.
    this.#masked = longestFirst(masked);
  }

  /** Take a chunk of stderr. */
  push(chunk: Buffer): void {
    const pieces = (this.#partial + this.#decoder.write(chunk)).split('\n');
    this.#partial = pieces.pop()!;
    for (const piece of pieces) this.#keep(piece);
    // A line with no end in sight is cut from its front, masked first so no value is cut in two:
    // only its end, where a value may still be arriving, is left unmasked.
    if (this.#partial.length > MAX_BYTES * 2) this.#partial = this.#mask(this.#partial).slice(-MAX_BYTES);
  }

  /** The last lines (at most 20, 4 KB), secrets masked; an unfinished last line included. */
  lines(): string[] {
    const partial = this.#clean(this.#partial);
    return partial ? [...this.#lines, partial].slice(-MAX_LINES) : [...this.#lines];
  }

  #keep(raw: string): void {
    const line = this.#clean(raw);
    if (!line) return;
    const kept = line.length > MAX_BYTES ? `…${line.slice(-MAX_BYTES)}` : line;
    this.#lines.push(kept);
    this.#bytes += Buffer.byteLength(kept);
    while (this.#lines.length > MAX_LINES || (this.#bytes > MAX_BYTES && this.#lines.length > 1))
      this.#bytes -= Buffer.byteLength(this.#lines.shift()!);
  }

  #clean(raw: string): string {
    return this.#mask(raw.replace(CONTROL, '')).trimEnd();
  }

  #mask(text: string): string {
    return replaceValues(text, this.#masked);
  }
}

/** `text` with each of the values replaced by `[NAME hidden]`. */
export function maskValues(text: string, masked: readonly MaskedValue[]): string {
  return replaceValues(text, longestFirst(masked));
}

// Longest first, so a value that contains another is hidden whole.
function longestFirst(masked: readonly MaskedValue[]): MaskedValue[] {
  return [...masked].sort((a, b) => b.value.length - a.value.length);
}

function replaceValues(text: string, ordered: readonly MaskedValue[]): string {
  let result = text;
  for (const { name, value } of ordered) result = result.replaceAll(value, `[${name} hidden]`);
  return result;
}

/** The lines a server wrote last, set below a sentence that says what happened ("" when none). */
export function stderrBlock(lines: readonly string[]): string {
  return lines.length ? `\nThe last lines of its stderr:\n${lines.map((line) => `  ${line}`).join('\n')}` : '';
}
