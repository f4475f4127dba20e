// discover-all-tools {types: true}: the tools found, as the TypeScript signatures of the
// callTool calls a run-code script makes, generated from each tool's inputSchema and outputSchema,
// so the agent writes a script's calls right the first time. A schema TypeScript cannot say
// shortly ($ref, deep nesting) is `unknown` there: the server still checks the call.
import type { CatalogTool } from '../../catalog/index.js';
import { oneLine } from '../../shared/index.js';
import { toolPurpose } from './toolPurpose.js';

const DESCRIPTION_WIDTH = 140;
// Deeper than this a schema is written `unknown`: the signature stays one readable line.
const MAX_DEPTH = 4;

const PREAMBLE = [
  "// In run-code: const result = await callTool(name, args); the result is the tool's CallToolResult.",
  'type ToolResult<S = unknown> = { content: Array<{ type: "text"; text: string } | { type: string; [key: string]: unknown }>; structuredContent?: S; isError?: boolean };',
];

/** The signatures answer: the result type, then one commented declaration per tool. */
export function toolSignatures(tools: readonly CatalogTool[], page: { total: number; offset: number }): string {
  const lines = [...PREAMBLE];
  for (const tool of tools) {
    const output = tool.definition.outputSchema ? `<${typeOf(tool.definition.outputSchema, 0)}>` : '';
    lines.push(
      `/** ${oneLine(toolPurpose(tool.description), DESCRIPTION_WIDTH) || '(no description)'} */`,
      `declare function callTool(name: ${JSON.stringify(tool.id)}, args: ${typeOf(tool.definition.inputSchema, 0)}): Promise<ToolResult${output}>;`,
    );
  }
  if (page.offset + tools.length < page.total) lines.push(`// More: offset=${page.offset + tools.length}.`);
  return lines.join('\n');
}

/** The TypeScript type a JSON Schema describes, on one line. */
export function typeOf(schema: unknown, depth: number): string {
  if (schema === false) return 'never';
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return 'unknown';
  const node = schema as Record<string, unknown>;
  if ('const' in node) return JSON.stringify(node.const) ?? 'unknown';
  if (Array.isArray(node.enum) && node.enum.length) return node.enum.map((value) => JSON.stringify(value) ?? 'unknown').join(' | ');
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = node[key];
    if (Array.isArray(branches) && branches.length) return [...new Set(branches.map((branch) => typeOf(branch, depth + 1)))].join(' | ');
  }
  if (Array.isArray(node.allOf) && node.allOf.length) return node.allOf.map((part) => grouped(typeOf(part, depth + 1))).join(' & ');
  const types: unknown[] = Array.isArray(node.type) ? node.type : [node.type ?? (node.properties ? 'object' : undefined)];
  return [...new Set(types.map((type) => typeNamed(type, node, depth)))].join(' | ');
}

function typeNamed(type: unknown, node: Record<string, unknown>, depth: number): string {
  switch (type) {
    case 'string':
    case 'boolean':
    case 'null':
      return type;
    case 'number':
    case 'integer':
      return 'number';
    case 'array':
      return `${grouped(typeOf(node.items, depth + 1))}[]`;
    case 'object':
      return objectType(node, depth);
    default:
      return 'unknown';
  }
}

function objectType(node: Record<string, unknown>, depth: number): string {
  const properties = node.properties && typeof node.properties === 'object' ? Object.entries(node.properties) : [];
  if (!properties.length) {
    const extra = node.additionalProperties;
    return `Record<string, ${extra && typeof extra === 'object' ? typeOf(extra, depth + 1) : 'unknown'}>`;
  }
  const required = new Set(Array.isArray(node.required) ? node.required : []);
  const members = properties.map(
    ([key, value]) =>
      `${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}${required.has(key) ? '' : '?'}: ${typeOf(value, depth + 1)}`,
  );
  return `{ ${members.join('; ')} }`;
}

// A union or intersection inside an array or an intersection needs its parentheses (around a
// member's union too, where they are only redundant).
function grouped(type: string): string {
  return / [|&] /.test(type) ? `(${type})` : type;
}
