// Flattened names: the client-safe alphabet, the length budget with its hash suffix, and
// collisions named distinctly and independently of order.
import { describe, expect, it } from 'vitest';
import { CLIENT_TOOL_NAME_LIMIT, assignExposedNames, flattenToolName, nameBudget } from './flatten.js';

const CLIENT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const BUDGET = nameBudget('loadout');

// A small deterministic generator, so the property checks below are reproducible.
function* pseudoRandomIds(count: number, seed = 7): Generator<string> {
  const alphabet = 'ab_-.Z9é/ 🙂x';
  let state = seed;
  const next = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < count; i++) {
    const server = ['a', 'a_b', 'srv', 'x'.repeat(40)][next() % 4]!;
    const length = 1 + (next() % 90);
    let tool = '';
    for (let j = 0; j < length; j++) tool += [...alphabet][next() % [...alphabet].length];
    yield `${server}.${tool}`;
  }
}

describe('nameBudget', () => {
  it('leaves room for the mcp__<key>__ prefix Claude Code adds', () => {
    expect(BUDGET).toBe(64 - 'mcp__loadout__'.length);
    expect(nameBudget('a-much-longer-client-key')).toBe(64 - 'mcp__a-much-longer-client-key__'.length);
  });

  it('never drops below a usable length for absurd keys', () => {
    expect(nameBudget('k'.repeat(80))).toBeGreaterThanOrEqual(16);
  });
});

describe('flattenToolName', () => {
  it('turns server.tool into server_tool', () => {
    expect(flattenToolName('git.status', BUDGET)).toBe('git_status');
  });

  it('keeps letters, digits, "_" and "-" and replaces everything else with "_"', () => {
    expect(flattenToolName('my-srv.read file/v2:é', BUDGET)).toBe('my-srv_read_file_v2__');
    expect(flattenToolName('a.b', BUDGET)).toMatch(CLIENT_NAME);
  });

  it('cuts long names to the budget with a stable hash suffix', () => {
    const id = `server.${'very_long_tool_name_'.repeat(5)}`;
    const name = flattenToolName(id, BUDGET);
    expect(name.length).toBe(BUDGET);
    expect(name).toMatch(/_[0-9a-f]{6}$/);
    expect(name.startsWith('server_very_long_tool_name_')).toBe(true);
    expect(flattenToolName(id, BUDGET)).toBe(name);
  });

  it('gives two long names with the same prefix different cut names', () => {
    const stem = `server.${'x'.repeat(60)}`;
    expect(flattenToolName(`${stem}_one`, BUDGET)).not.toBe(flattenToolName(`${stem}_two`, BUDGET));
  });

  it('leaves a name exactly at the budget uncut', () => {
    const id = `s.${'t'.repeat(BUDGET - 2)}`;
    expect(flattenToolName(id, BUDGET)).toBe(`s_${'t'.repeat(BUDGET - 2)}`);
  });
});

describe('assignExposedNames', () => {
  it('gives a_b.c and a.b_c (both "a_b_c") distinct names', () => {
    const names = assignExposedNames(['a_b.c', 'a.b_c'], BUDGET);
    expect(new Set(names.values()).size).toBe(2);
    expect([...names.values()]).toContain('a_b_c');
  });

  it('names colliding tools the same whatever order they come in', () => {
    const ids = ['a_b.c', 'a.b_c', 'a.b.c', 'x.y'];
    const forward = assignExposedNames(ids, BUDGET);
    const backward = assignExposedNames([...ids].reverse(), BUDGET);
    const shuffled = assignExposedNames([ids[2]!, ids[0]!, ids[3]!, ids[1]!], BUDGET);
    expect(Object.fromEntries(backward)).toEqual(Object.fromEntries(forward));
    expect(Object.fromEntries(shuffled)).toEqual(Object.fromEntries(forward));
    // The alphabetically first id keeps the plain name; the others carry a hash of their own id.
    expect(forward.get('a.b.c')).toBe('a_b_c');
    expect(forward.get('a.b_c')).toMatch(/^a_b_c_[0-9a-f]{6}$/);
    expect(forward.get('a_b.c')).toMatch(/^a_b_c_[0-9a-f]{6}$/);
    expect(forward.get('x.y')).toBe('x_y');
  });

  it('keeps a tool name stable when the same set is named again', () => {
    const ids = [...pseudoRandomIds(50)];
    expect(Object.fromEntries(assignExposedNames(ids, BUDGET))).toEqual(Object.fromEntries(assignExposedNames(ids, BUDGET)));
  });

  it('never hands out a reserved name', () => {
    const reserved = new Set(['call-tool', 'a_b']);
    const names = assignExposedNames(['a.b', 'c.d'], BUDGET, reserved);
    expect(names.get('a.b')).not.toBe('a_b');
    expect(names.get('a.b')).toMatch(/^a_b_[0-9a-f]{6}$/);
    expect(names.get('c.d')).toBe('c_d');
  });

  it('gives unique client-safe names that fit mcp__loadout__ within 64 characters, for odd input', () => {
    const ids = [...new Set(pseudoRandomIds(400))];
    const reserved = new Set(['discover-all-tools', 'call-tool']);
    const names = assignExposedNames(ids, BUDGET, reserved);
    expect(names.size).toBe(ids.length);
    expect(new Set(names.values()).size).toBe(ids.length);
    for (const name of names.values()) {
      expect(name).toMatch(CLIENT_NAME);
      expect(`mcp__loadout__${name}`.length).toBeLessThanOrEqual(CLIENT_TOOL_NAME_LIMIT);
      expect(reserved.has(name)).toBe(false);
    }
  });

  it('stays unique when many long names share a cut prefix', () => {
    const ids = Array.from({ length: 200 }, (_, i) => `server.${'p'.repeat(70)}${i}`);
    const names = assignExposedNames(ids, BUDGET);
    expect(new Set(names.values()).size).toBe(200);
    for (const name of names.values()) expect(name.length).toBeLessThanOrEqual(BUDGET);
  });
});
