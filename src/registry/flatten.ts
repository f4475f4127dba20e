// Flattened names: `server.tool` → a client-safe tool name. Clients accept
// ^[a-zA-Z0-9_-]{1,64}$ and Claude Code adds `mcp__<key>__` in front, so names are cut to a
// budget with a stable hash suffix, and tools that flatten alike get distinct stable names.
import { createHash } from 'node:crypto';

/** The strictest common client limit on a tool name. */
export const CLIENT_TOOL_NAME_LIMIT = 64;
const HASH_LENGTH = 6;
const MIN_BUDGET = 16;

/** Characters left for our names once a client has prefixed `mcp__<clientKey>__`. */
export function nameBudget(clientKey: string): number {
  return Math.max(MIN_BUDGET, CLIENT_TOOL_NAME_LIMIT - `mcp__${clientKey}__`.length);
}

/** `server.tool` → `server_tool`: every character outside [A-Za-z0-9_-] becomes `_`, cut to `maxLength`. */
export function flattenToolName(id: string, maxLength: number): string {
  const flat = id.replace(/[^A-Za-z0-9_-]/g, '_');
  return flat.length <= maxLength ? flat : withHash(flat, id, maxLength, HASH_LENGTH);
}

/**
 * Exposed names for a set of tool ids: unique, within `maxLength`, never equal to a reserved
 * name. On a collision the alphabetically first id keeps the plain name and the others get a
 * hash of their own id, so each name depends only on the ids present, not on their order.
 */
export function assignExposedNames(
  ids: readonly string[],
  maxLength: number,
  reserved: ReadonlySet<string> = new Set(),
): Map<string, string> {
  const groups = new Map<string, string[]>();
  for (const id of ids) {
    const base = flattenToolName(id, maxLength);
    const group = groups.get(base);
    if (group) group.push(id);
    else groups.set(base, [id]);
  }
  const names = new Map<string, string>();
  const taken = new Set(reserved);
  const needHash: Array<[string, string]> = [];
  for (const [base, group] of groups) {
    group.sort();
    group.forEach((id, index) => {
      if (index === 0 && !reserved.has(base)) {
        names.set(id, base);
        taken.add(base);
      } else {
        needHash.push([id, base]);
      }
    });
  }
  for (const [id, base] of needHash) {
    // A longer hash settles the (astronomically rare) case of a suffixed name meeting another name.
    let hashLength = HASH_LENGTH;
    let name = withHash(base, id, maxLength, hashLength);
    while (taken.has(name)) name = withHash(base, id, maxLength, ++hashLength);
    names.set(id, name);
    taken.add(name);
  }
  return names;
}

function withHash(flat: string, id: string, maxLength: number, hashLength: number): string {
  const hash = createHash('sha256').update(id).digest('hex').slice(0, hashLength);
  return `${flat.slice(0, Math.max(1, maxLength - hashLength - 1))}_${hash}`;
}
