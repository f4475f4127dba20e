// The map of a large catalog with the names real servers have (the large dev set's 108 servers,
// the other packages its harvest tried, and second accounts of the same servers): every server is
// named within the instructions' budget at 200 servers; past what fits, the instructions say how
// many are left out and discover-all-tools {} still names them all.
import { describe, expect, it } from 'vitest';
import { realisticMapEntries } from '../../bench/searchDevLarge.js';
import { formatServerMap, LISTED_MAP_BUDGET_BYTES, MAP_BUDGET_BYTES } from '../../src/catalog/index.js';

// The names a map says, braces expanded as a shell would: `jira{,-2}` is jira and jira-2.
function namesIn(lines: readonly string[]): Set<string> {
  const text = lines
    .map((line) => line.replace(/^[a-z]+: /, ''))
    .join(' ')
    .replace(/([\w.-]*)\{([^}]*)\}/g, (_, head: string, rests: string) =>
      rests
        .split(',')
        .map((rest) => `${head}${rest}`)
        .join(' '),
    );
  return new Set(text.split(/[\s,]+/));
}

describe('the map of a large catalog', () => {
  it(`names every one of 200 servers within ${MAP_BUDGET_BYTES} bytes, grouped under labels`, () => {
    const entries = realisticMapEntries(200);
    expect(new Set(entries.map((entry) => entry.server)).size).toBe(200);
    const map = formatServerMap(entries);
    expect(Buffer.byteLength(map.join('\n'))).toBeLessThanOrEqual(MAP_BUDGET_BYTES);
    const named = namesIn(map);
    for (const { server } of entries) expect(named, server).toContain(server);
    expect(map.some((line) => line.startsWith('databases: '))).toBe(true);
    expect(map.join('\n')).not.toMatch(/more servers/);
  });

  it('past what fits says how many servers it leaves out, and discover-all-tools {} names them all', () => {
    const entries = realisticMapEntries(400);
    const map = formatServerMap(entries);
    expect(Buffer.byteLength(map.join('\n'))).toBeLessThanOrEqual(MAP_BUDGET_BYTES);
    const left = Number(/^… and (\d+) more servers not named here: discover-all-tools \{\} names them all\.$/.exec(map.at(-1)!)?.[1]);
    const named = entries.filter(({ server }) => namesIn(map).has(server)).length;
    expect(named).toBeGreaterThan(250);
    expect(named + left).toBe(400);
    const listed = formatServerMap(entries, MAP_BUDGET_BYTES, LISTED_MAP_BUDGET_BYTES);
    for (const { server } of entries) expect(namesIn(listed), server).toContain(server);
  });
});
