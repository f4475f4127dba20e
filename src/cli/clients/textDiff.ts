// A unified diff of two texts, line by line (Myers' O((N+M)·D) algorithm), for showing what
// `loadout setup` will change in a file before it asks. Knows nothing about JSON.

type Op = { kind: ' ' | '-' | '+'; line: string };

/** The unified diff from `before` to `after` (absent = empty), labelled `file`; '' when equal. */
export function unifiedDiff(file: string, before: string | undefined, after: string | undefined, context = 3): string {
  const a = splitLines(before);
  const b = splitLines(after);
  if (before === after) return '';
  const ops = diffLines(a, b);
  const hunks: string[] = [];
  let index = 0;
  while (index < ops.length) {
    if (ops[index]!.kind === ' ') {
      index++;
      continue;
    }
    // Grow the hunk while changes are closer than two contexts apart.
    let start = Math.max(0, index - context);
    let end = index;
    while (end < ops.length) {
      let next = end;
      while (next < ops.length && ops[next]!.kind !== ' ') next++;
      let gap = next;
      while (gap < ops.length && ops[gap]!.kind === ' ') gap++;
      if (gap < ops.length && gap - next <= 2 * context) end = gap;
      else {
        end = Math.min(ops.length, next + context);
        break;
      }
    }
    const slice = ops.slice(start, end);
    const oldStart = ops.slice(0, start).filter((op) => op.kind !== '+').length;
    const newStart = ops.slice(0, start).filter((op) => op.kind !== '-').length;
    const oldCount = slice.filter((op) => op.kind !== '+').length;
    const newCount = slice.filter((op) => op.kind !== '-').length;
    hunks.push(
      `@@ -${oldStart + (oldCount ? 1 : 0)},${oldCount} +${newStart + (newCount ? 1 : 0)},${newCount} @@`,
      ...slice.map((op) => `${op.kind}${op.line}`),
    );
    index = end;
    start = end;
  }
  return [`--- ${before === undefined ? '/dev/null' : file}`, `+++ ${after === undefined ? '/dev/null' : file}`, ...hunks].join('\n');
}

function splitLines(text: string | undefined): string[] {
  if (!text) return [];
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

// Lines the texts share at both ends are taken off first: an edit to a large file (~/.claude.json)
// leaves Myers only the part between the first and last change.
function diffLines(a: string[], b: string[]): Op[] {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const same = (lines: string[]): Op[] => lines.map((line) => ({ kind: ' ', line }));
  return [
    ...same(a.slice(0, prefix)),
    ...myers(a.slice(prefix, a.length - suffix), b.slice(prefix, b.length - suffix)),
    ...same(a.slice(a.length - suffix)),
  ];
}

function myers(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = max === 0;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // Walk back through the saved frontiers to recover the edit script.
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0 && (x > 0 || y > 0); d--) {
    const frontier = trace[d]!;
    const k = x - y;
    const previousK = k === -d || (k !== d && frontier[offset + k - 1]! < frontier[offset + k + 1]!) ? k + 1 : k - 1;
    const previousX = d === 0 ? 0 : frontier[offset + previousK]!;
    const previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      y--;
      ops.push({ kind: ' ', line: a[--x]! });
    }
    if (d === 0) break;
    if (x === previousX) ops.push({ kind: '+', line: b[--y]! });
    else ops.push({ kind: '-', line: a[--x]! });
  }
  return ops.reverse();
}
