// SEP-2243's custom headers (2026-07-28 streamable HTTP): a tool's inputSchema may mark a
// parameter `x-mcp-header: Name`, and a call of it over HTTP then mirrors that argument in an
// `Mcp-Param-Name` header, which a server that reads the body checks against it. The SDK keeps its
// codec internal (its HTTP handler checks only an McpServer's tools, and its Client mirrors only
// for callTool), so loadout, which forwards raw requests, reads the rules here: which annotations
// are valid, how a value is written (plain, or `=?base64?…?=`), and how a received header is checked.

/** One annotated parameter: where it is in the arguments, the header's suffix, and its type. */
export interface ParamHeader {
  readonly path: readonly string[];
  readonly name: string;
  readonly type: 'string' | 'integer' | 'boolean';
}

/** A tool's annotations: valid (possibly none), or the first rule they break. */
export type ParamHeaderScan = { valid: true; headers: readonly ParamHeader[] } | { valid: false; reason: string };

/** The JSON-RPC error code of a header that disagrees with the body (SEP-2243's HeaderMismatch, sent with HTTP 400). */
export const HEADER_MISMATCH = -32020;

const PREFIX = 'Mcp-Param-';
const KEY = 'x-mcp-header';
// RFC 9110's token (1*tchar): no spaces, delimiters or control characters.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES: ReadonlySet<unknown> = new Set(['string', 'integer', 'boolean']);
// Keywords whose subschemas are not reached by a chain of `properties`: an annotation under one is invalid.
const UNREACHED = ['items', 'prefixItems', 'contains', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems'];
const UNREACHED_LISTS = ['oneOf', 'anyOf', 'allOf'];
const UNREACHED_ONE = ['not', 'if', 'then', 'else', 'propertyNames'];
const UNREACHED_MAPS = ['$defs', 'definitions', 'patternProperties', 'dependentSchemas'];
const SENTINEL = /^=\?base64\?(.*)\?=$/s;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// Sent as it is: printable ASCII with no space at either end.
const PLAIN = /^(?:[!-~]|[!-~][ -~]*[!-~])$/;

// One scan per inputSchema object: a definition is scanned when its session's snapshot is built, and kept.
const scanned = new WeakMap<object, ParamHeaderScan>();

/** The `x-mcp-header` annotations of `inputSchema`, checked against every rule SEP-2243 gives them. */
export function scanParamHeaders(inputSchema: unknown): ParamHeaderScan {
  if (typeof inputSchema !== 'object' || inputSchema === null) return { valid: true, headers: [] };
  let scan = scanned.get(inputSchema);
  if (!scan) {
    scan = scanSchema(inputSchema);
    scanned.set(inputSchema, scan);
  }
  return scan;
}

function scanSchema(root: object): ParamHeaderScan {
  const headers: ParamHeader[] = [];
  const seen = new Map<string, string>();
  // Walked with a stack, not recursion: a schema comes from a server and may be deep.
  const stack: Array<{ node: unknown; path: string[]; reached: boolean }> = [{ node: root, path: [], reached: true }];
  while (stack.length) {
    const { node, path, reached } = stack.pop()!;
    if (typeof node !== 'object' || node === null || Array.isArray(node)) continue;
    const schema = node as Record<string, unknown>;
    const where = path.length ? path.join('.') : 'the schema itself';
    if (KEY in schema) {
      const name = schema[KEY];
      if (!reached || path.length === 0)
        return { valid: false, reason: `${where}: x-mcp-header is allowed only on a property reached through "properties"` };
      if (typeof name !== 'string' || !TOKEN.test(name))
        return { valid: false, reason: `${where}: x-mcp-header ${JSON.stringify(name)} is not an HTTP header name (RFC 9110 token)` };
      if (!HEADER_TYPES.has(schema.type))
        return { valid: false, reason: `${where}: x-mcp-header is allowed only on a string, integer or boolean property` };
      const earlier = seen.get(name.toLowerCase());
      if (earlier !== undefined) return { valid: false, reason: `x-mcp-header '${name}' is declared twice (also as '${earlier}')` };
      seen.set(name.toLowerCase(), name);
      headers.push({ path, name, type: schema.type as ParamHeader['type'] });
    }
    const properties = schema.properties;
    if (typeof properties === 'object' && properties !== null)
      for (const [key, child] of Object.entries(properties)) stack.push({ node: child, path: [...path, key], reached });
    const beyond = (child: unknown): void => void stack.push({ node: child, path: [...path, '…'], reached: false });
    for (const key of [...UNREACHED, ...UNREACHED_ONE]) beyond(schema[key]);
    for (const key of UNREACHED_LISTS) if (Array.isArray(schema[key])) (schema[key] as unknown[]).forEach(beyond);
    for (const key of UNREACHED_MAPS) {
      const map = schema[key];
      if (typeof map === 'object' && map !== null) Object.values(map).forEach(beyond);
    }
  }
  return { valid: true, headers };
}

/** The `Mcp-Param-*` headers of a call of a tool annotated `headers` with `args`: none for an absent or null value. */
export function paramHeadersOf(headers: readonly ParamHeader[], args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const header of headers) {
    const text = textOf(valueAt(args, header.path));
    if (text !== undefined) out[PREFIX + header.name] = PLAIN.test(text) && !SENTINEL.test(text) ? text : encoded(text);
  }
  return out;
}

/**
 * Why the headers of a call (`read`: a header's value by name, any case) disagree with its
 * arguments, or undefined when they agree: a value in the body needs its header, decoded equal.
 */
export function paramHeaderMismatch(
  headers: readonly ParamHeader[],
  args: unknown,
  read: (name: string) => string | undefined,
): string | undefined {
  for (const header of headers) {
    const value = valueAt(args, header.path);
    const text = textOf(value);
    if (text === undefined) continue;
    const name = PREFIX + header.name;
    const received = read(name.toLowerCase());
    if (received === undefined) return `the arguments give ${header.path.join('.')} but the ${name} header is missing`;
    const decoded = decoded64(received.trim());
    if (decoded === undefined) return `the ${name} header is not valid Base64 inside =?base64?…?=`;
    // An integer compares as a number (42.0 is 42); the rest as text.
    const same = header.type === 'integer' && typeof value === 'number' ? Number(decoded) === value && decoded !== '' : decoded === text;
    if (!same) return `the ${name} header says ${JSON.stringify(decoded)} but the arguments give ${JSON.stringify(value)}`;
  }
  return undefined;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let node = args;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

// A value as header text; undefined for one no header carries (absent, null, not a primitive, an unsafe integer).
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value)))
    return String(value);
  return undefined;
}

function encoded(text: string): string {
  return `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

// A header's value as text: a sentinel's payload decoded (undefined when it is not Base64 of UTF-8), anything else literal.
function decoded64(value: string): string | undefined {
  const payload = SENTINEL.exec(value)?.[1];
  if (payload === undefined) return value;
  if (!BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}
