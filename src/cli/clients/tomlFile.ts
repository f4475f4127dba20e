// A client's TOML config file (Codex CLI's ~/.codex/config.toml) as text: parse it with smol-toml
// (refusing what does not parse), and add or remove one `[mcp_servers.NAME]` table by editing the
// text, so comments, order and every other setting stay as they were. Each edit is checked by
// parsing the result: an edit that would change anything but that one server is refused.
import { isDeepStrictEqual } from 'node:util';
import { parse, stringify, TomlError } from 'smol-toml';
import { LoadoutError } from '../../shared/index.js';

/** Parse TOML; throws CONFIG_INVALID with the error's line and column. */
export function parseTomlText(file: string, text: string): Record<string, unknown> {
  try {
    return parse(text);
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const reason = error.message.split('\n')[0];
    throw new LoadoutError(
      'CONFIG_INVALID',
      `${file}:${error.line}:${error.column}: ${reason}; loadout does not change a file it cannot parse`,
    );
  }
}

/**
 * `text` with the table at `tablePath` (e.g. ['mcp_servers', 'memory']) set to `value`, or removed
 * when `value` is undefined. A new table goes at the end; a removed one takes its sub-tables
 * (`[mcp_servers.memory.env]`), the comment lines right above its header and the lines up to the
 * next table with it, but for the comment lines right above that table's header.
 */
export function setTomlTable(file: string, text: string, tablePath: readonly string[], value: Record<string, unknown> | undefined): string {
  const before = text.trim() === '' ? {} : parseTomlText(file, text);
  const next = value === undefined ? withoutTable(text, tablePath) : withTable(text, tablePath, value);
  // Plain objects (smol-toml's have no prototype), so the comparison below sees only values.
  const expected = JSON.parse(JSON.stringify(before)) as Record<string, unknown>;
  const parent = tablePath.slice(0, -1).reduce<Record<string, unknown>>((at, key) => (at[key] ??= {}) as Record<string, unknown>, expected);
  if (value === undefined) delete parent[tablePath.at(-1)!];
  else parent[tablePath.at(-1)!] = value;
  const actual = JSON.parse(JSON.stringify(parseTomlText(file, next))) as Record<string, unknown>;
  if (!isDeepStrictEqual(withoutEmptyParents(actual, tablePath), withoutEmptyParents(expected, tablePath)))
    throw new LoadoutError(
      'CONFIG_INVALID',
      `${file}: [${tablePath.join('.')}] is not written as a table of its own; loadout does not change this file (edit it by hand)`,
    );
  return next;
}

// `data` without the tables along `tablePath` that are left empty: removing the last server may or
// may not leave an `[mcp_servers]` header behind, and either is right.
function withoutEmptyParents(data: Record<string, unknown>, tablePath: readonly string[]): Record<string, unknown> {
  const [key, ...rest] = tablePath;
  const inner = key === undefined ? undefined : data[key];
  if (!inner || typeof inner !== 'object' || Array.isArray(inner) || !rest.length) return data;
  const pruned = withoutEmptyParents(inner as Record<string, unknown>, rest);
  const { [key!]: _dropped, ...others } = data;
  return Object.keys(pruned).length ? { ...others, [key!]: pruned } : others;
}

function withTable(text: string, tablePath: readonly string[], value: Record<string, unknown>): string {
  // stringify nests the path into dotted table headers: [mcp_servers.loadout], [mcp_servers.loadout.env].
  const nested = tablePath.reduceRight<Record<string, unknown>>((inner, key) => ({ [key]: inner }), value);
  const table = stringify(nested).replace(/^\[[^\]\n]+\]\n(?=\[)/, '');
  const separator = text === '' || text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return `${text}${separator}${table.trimEnd()}\n`;
}

function withoutTable(text: string, tablePath: readonly string[]): string {
  const kept: string[] = [];
  // The lines of the table being removed since its header; undefined while keeping.
  let removed: string[] | undefined;
  for (const line of text.split('\n')) {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/.exec(line);
    if (header) {
      const within = isWithin(keysOf(header[1]!), tablePath);
      if (removed && !within) kept.push(...attachedComments(removed));
      // A removed table takes the comment written right above its header with it.
      if (!removed && within) kept.length -= attachedComments(kept).length;
      removed = within ? [] : undefined;
      if (within) continue;
    }
    (removed ?? kept).push(line);
  }
  return kept.join('\n');
}

// The comment lines at the end of `lines`, right above the header that follows them (no blank
// line between): they belong to the table that header opens, not to the one before it.
function attachedComments(lines: readonly string[]): string[] {
  let start = lines.length;
  while (start > 0 && /^\s*#/.test(lines[start - 1]!)) start--;
  return lines.slice(start);
}

// The keys of a table header's dotted name: `mcp_servers."my server"` → ['mcp_servers', 'my server'].
function keysOf(name: string): string[] {
  return [...name.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+)/g)].map((match) =>
    match[1] !== undefined ? (JSON.parse(`"${match[1]}"`) as string) : (match[2] ?? match[3]!),
  );
}

function isWithin(keys: readonly string[], tablePath: readonly string[]): boolean {
  return keys.length >= tablePath.length && tablePath.every((key, index) => keys[index] === key);
}

/**
 * Codex CLI's server entries in the shape of the other clients' (`mcpServers`): `http_headers` as
 * `headers`, `bearer_token_env_var` as an Authorization header naming the variable, `enabled:
 * false` as `disabled`. Other keys pass through.
 */
export function codexServersAsMcp(servers: unknown): unknown {
  if (!servers || typeof servers !== 'object' || Array.isArray(servers)) return servers;
  return Object.fromEntries(
    Object.entries(servers).map(([name, raw]) => {
      if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return [name, raw];
      const { http_headers: httpHeaders, bearer_token_env_var: bearerVariable, enabled, ...rest } = raw as Record<string, unknown>;
      const headers = {
        ...(httpHeaders && typeof httpHeaders === 'object' ? httpHeaders : {}),
        ...(typeof bearerVariable === 'string' ? { Authorization: `Bearer \${${bearerVariable}}` } : {}),
      };
      return [name, { ...rest, ...(Object.keys(headers).length ? { headers } : {}), ...(enabled === false ? { disabled: true } : {}) }];
    }),
  );
}
