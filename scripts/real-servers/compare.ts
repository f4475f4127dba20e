// The comparison of the real-servers check, with no I/O: one list as a server sent it directly
// against the same list as loadout passed it on. Each definition is compared as the JSON text it
// serializes to, keys in the order they arrived; the one field loadout renames (a tool's or
// prompt's name, a URI prefixed on a collision) is first set to the name loadout gave it, in place.

/** The four lists the check compares. */
export type ListKind = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** In table order. */
export const LIST_KINDS: readonly ListKind[] = ['tools', 'prompts', 'resources', 'resourceTemplates'];

/** The field that names an item of each list. */
export const KEY_FIELD: Record<ListKind, string> = {
  tools: 'name',
  prompts: 'name',
  resources: 'uri',
  resourceTemplates: 'uriTemplate',
};

// Problems listed per list before the rest are counted.
const MAX_PROBLEMS = 5;
const SNIPPET = 80;

/**
 * The differences between a direct list and loadout's, worded for a person; empty when every
 * definition is byte-identical (after the rename) and in the same order. `exposedKey` gives the
 * name (or URI) loadout is expected to list a direct item under.
 */
export function compareList(
  kind: ListKind,
  direct: readonly unknown[],
  loadout: readonly unknown[],
  exposedKey: (item: Record<string, unknown>) => string | undefined,
): string[] {
  const field = KEY_FIELD[kind];
  if (direct.length > 0 && loadout.length === 0) return [`none listed (direct: ${direct.length})`];
  const keyOf = (item: unknown): string => {
    const value = isRecord(item) ? item[field] : undefined;
    return typeof value === 'string' ? value : JSON.stringify(item).slice(0, SNIPPET);
  };
  const unmatched = new Map<string, number>();
  loadout.forEach((item, index) => unmatched.set(keyOf(item), index));
  const pairs: Array<{ direct: Record<string, unknown>; index: number }> = [];
  const problems: string[] = [];
  for (const item of direct) {
    if (!isRecord(item)) {
      problems.push(`direct item is not an object: ${JSON.stringify(item).slice(0, SNIPPET)}`);
      continue;
    }
    const expected = exposedKey(item);
    const key = expected === undefined ? undefined : [...unmatched.keys()].find((candidate) => isExposedAs(field, expected, candidate));
    if (key === undefined) {
      problems.push(`missing ${keyOf(item)}${expected !== undefined && expected !== keyOf(item) ? ` (as ${expected})` : ''}`);
      continue;
    }
    pairs.push({ direct: item, index: unmatched.get(key)! });
    unmatched.delete(key);
  }
  for (const key of unmatched.keys()) problems.push(`extra ${key}`);
  for (const pair of pairs) {
    const listed = loadout[pair.index];
    const expected = JSON.stringify(withField(pair.direct, field, keyOf(listed)));
    if (expected !== JSON.stringify(listed))
      problems.push(`${keyOf(pair.direct)}: ${describeDifference(JSON.parse(expected), listed) ?? 'differs'}`);
  }
  const order = pairs.map((pair) => pair.index);
  if (problems.length === 0 && order.some((index, position) => position > 0 && index < order[position - 1]!))
    problems.push('same definitions in another order');
  return problems.length > MAX_PROBLEMS ? [...problems.slice(0, MAX_PROBLEMS), `… ${problems.length - MAX_PROBLEMS} more`] : problems;
}

// A name too long for loadout's budget, or flattened like another, is cut and given a hash suffix.
function isExposedAs(field: string, expected: string, candidate: string): boolean {
  if (candidate === expected) return true;
  const hashed = field === 'name' ? /^(.+)_[0-9a-f]{6,}$/.exec(candidate) : null;
  return hashed !== null && expected.startsWith(hashed[1]!);
}

/** `server.tool` → `server_tool`, as loadout flattens a name that fits its length budget. */
export function flattenedName(server: string, name: string): string {
  return `${server}.${name}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * Where two JSON values first differ, in words: a key order that differs (same content), or the
 * path and both values. Undefined when they serialize alike.
 */
export function describeDifference(expected: unknown, actual: unknown, at = ''): string | undefined {
  if (JSON.stringify(expected) === JSON.stringify(actual)) return undefined;
  const where = at || '(top)';
  if (isRecord(expected) && isRecord(actual)) {
    const expectedKeys = Object.keys(expected);
    const actualKeys = Object.keys(actual);
    const missing = expectedKeys.filter((key) => !(key in actual));
    const extra = actualKeys.filter((key) => !(key in expected));
    if (missing.length) return `${where}: loadout lacks ${missing.map((key) => `"${key}"`).join(', ')}`;
    if (extra.length) return `${where}: loadout adds ${extra.map((key) => `"${key}"`).join(', ')}`;
    for (const key of expectedKeys) {
      const inner = describeDifference(expected[key], actual[key], `${at}.${key}`);
      if (inner) return inner;
    }
    return `${where}: key order differs: direct [${expectedKeys.join(', ')}], loadout [${actualKeys.join(', ')}]`;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (expected.length !== actual.length) return `${where}: direct has ${expected.length} entries, loadout ${actual.length}`;
    for (let index = 0; index < expected.length; index++) {
      const inner = describeDifference(expected[index], actual[index], `${at}[${index}]`);
      if (inner) return inner;
    }
  }
  return `${where}: direct ${snippet(expected)}, loadout ${snippet(actual)}`;
}

function withField(item: Record<string, unknown>, field: string, value: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(item).map(([key, old]) => [key, key === field ? value : old]));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function snippet(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > SNIPPET ? `${text.slice(0, SNIPPET)}…` : text;
}
