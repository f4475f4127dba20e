import { describe, expect, it } from 'vitest';
import { unifiedDiff } from './textDiff.js';

// Rebuild the new text from the old one and the hunks, as `patch` would.
function applyDiff(before: string, diff: string): string {
  const old = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let at = 0;
  for (const line of diff.split('\n').slice(2)) {
    const hunk = /^@@ -(\d+),(\d+)/.exec(line);
    if (hunk) {
      const start = Number(hunk[1]) - (Number(hunk[2]) ? 1 : 0);
      out.push(...old.slice(at, start));
      at = start;
    } else if (line.startsWith('+')) out.push(line.slice(1));
    else {
      expect(old[at]).toBe(line.slice(1));
      at++;
      if (line.startsWith(' ')) out.push(line.slice(1));
    }
  }
  out.push(...old.slice(at));
  return out.length ? `${out.join('\n')}\n` : '';
}

describe('unifiedDiff', () => {
  it('is empty for equal texts and shows one hunk for a removal in a long file', () => {
    const lines = Array.from({ length: 500 }, (_, index) => `line ${index}`);
    const before = `${lines.join('\n')}\n`;
    expect(unifiedDiff('f', before, before)).toBe('');
    const after = `${lines.filter((_, index) => index !== 250).join('\n')}\n`;
    expect(unifiedDiff('f', before, after)).toBe(
      [
        '--- f',
        '+++ f',
        '@@ -248,7 +248,6 @@',
        ' line 247',
        ' line 248',
        ' line 249',
        '-line 250',
        ' line 251',
        ' line 252',
        ' line 253',
      ].join('\n'),
    );
  });

  it('rebuilds the new text from the old one for random edits', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const a = Array.from({ length: random(30) }, () => `l${random(6)}`);
      const b = [...a];
      for (let edit = random(6); edit > 0; edit--) {
        if (random(2) && b.length) b.splice(random(b.length), 1);
        else b.splice(random(b.length + 1), 0, `n${random(6)}`);
      }
      const before = a.length ? `${a.join('\n')}\n` : '';
      const after = b.length ? `${b.join('\n')}\n` : '';
      const diff = unifiedDiff('f', before, after, random(4));
      expect(before === after ? '' : applyDiff(before, diff)).toBe(before === after ? '' : after);
    }
  });
});
