// Canonical JSON (RFC 8785: keys sorted by UTF-16 code units, ECMAScript number and string forms,
// no whitespace), written without recursion: a value a peer sent may nest as deep as JSON.parse
// reads (1,000,000 levels), and a recursive writer overflows the stack long before that.

// What the work stack holds besides values: text written as it is, and the end of a container
// (which leaves the open containers, so a cycle is told from a value reached twice).
class Text {
  constructor(readonly text: string) {}
}
class Close {
  constructor(
    readonly text: string,
    readonly container: object,
  ) {}
}
const COMMA = new Text(',');

/** `value` as RFC 8785 canonical JSON; undefined (and a function or symbol) as `null`, as in an array. Throws on a cycle. */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const open = new Set<object>();
  const work: unknown[] = [value];
  while (work.length > 0) {
    let item = work.pop();
    if (item instanceof Text) {
      out.push(item.text);
      continue;
    }
    if (item instanceof Close) {
      open.delete(item.container);
      out.push(item.text);
      continue;
    }
    if (item !== null && typeof item === 'object' && typeof (item as { toJSON?: unknown }).toJSON === 'function') {
      item = (item as { toJSON(): unknown }).toJSON();
    }
    if (item === null || typeof item !== 'object') {
      out.push(JSON.stringify(item) ?? 'null');
      continue;
    }
    if (open.has(item)) throw new TypeError('canonicalJson: the value holds a cycle');
    open.add(item);
    if (Array.isArray(item)) {
      out.push('[');
      work.push(new Close(']', item));
      for (let index = item.length - 1; index >= 0; index--) {
        work.push(item[index]);
        if (index > 0) work.push(COMMA);
      }
      continue;
    }
    out.push('{');
    work.push(new Close('}', item));
    const record = item as Record<string, unknown>;
    // Keys whose value JSON.stringify would drop are dropped, as RFC 8785 does.
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined && typeof record[key] !== 'function' && typeof record[key] !== 'symbol')
      .sort();
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index]!;
      work.push(record[key], new Text(`${index > 0 ? ',' : ''}${JSON.stringify(key)}:`));
    }
  }
  return out.join('');
}
