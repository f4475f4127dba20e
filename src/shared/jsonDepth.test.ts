import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestedDeeperThan } from './jsonDepth.js';

describe('nestedDeeperThan', () => {
  const nested = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

  it('tells a body nested past the limit from one at it', () => {
    expect(nestedDeeperThan(nested(10), 10)).toBe(false);
    expect(nestedDeeperThan(nested(11), 10)).toBe(true);
    expect(nestedDeeperThan(`{"a":${nested(5)},"b":{"c":${nested(6)}}}`, 6)).toBe(true);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(nestedDeeperThan(`["${'['.repeat(50)}\\"${'{'.repeat(50)}"]`, 10)).toBe(false);
    // An escaped backslash ends before the quote, which closes the string: the brackets after it count.
    expect(nestedDeeperThan(`["a\\\\"${'['.repeat(50)}${']'.repeat(50)}]`, 10)).toBe(true);
    expect(nestedDeeperThan(`["a\\\\\\"${'['.repeat(50)}"]`, 10)).toBe(false);
  });
});

describe('nestedDeeperThan at the shared limit', () => {
  it('finds a text 1,000,000 levels deep without overflowing the stack', () => {
    const depth = 1_000_000;
    expect(nestedDeeperThan(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`)).toBe(true);
    expect(nestedDeeperThan(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBe(false);
  });
});
