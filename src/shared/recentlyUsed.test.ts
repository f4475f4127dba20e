import { describe, expect, it } from 'vitest';
import { RecentlyUsed } from './recentlyUsed.js';

describe('RecentlyUsed', () => {
  it('drops the least recently used entry past its bound, a read counting as a use', () => {
    const dropped: string[] = [];
    const map = new RecentlyUsed<string, number>(2, { onEvict: (_value, key) => dropped.push(key) });
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(dropped).toEqual(['b']);
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([1, undefined, 3]);
    expect(map.size).toBe(2);
  });

  it('keeps an entry in use past the bound, and drops it once it is idle and another comes', () => {
    const busy = new Set(['a']);
    const map = new RecentlyUsed<string, string>(1, { evictable: (value) => !busy.has(value) });
    map.set('a', 'a');
    map.set('b', 'b');
    expect([...map.values()]).toEqual(['a', 'b']);
    busy.clear();
    map.set('c', 'c');
    expect([...map.values()]).toEqual(['c']);
  });
});
