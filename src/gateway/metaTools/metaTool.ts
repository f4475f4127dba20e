// The shape of a meta-tool (a tool loadout itself answers), and the helpers that turn its zod
// input schema into the JSON Schema clients see and its errors into readable isError results.
import type { ServerNotification, ServerRequest, CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import * as z from 'zod';
import type { GatewayContext } from '../context.js';
import type { GatewaySession } from '../session.js';

/** The extra argument of an MCP request handler on the client-facing server. */
export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a meta-tool handler can reach. */
export interface MetaToolContext {
  gateway: GatewayContext;
  session: GatewaySession;
  extra: RequestExtra;
}

/** A tool answered by loadout itself. */
export interface MetaTool<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: Schema;
  /** A valid call, shown in the error for a malformed one. */
  example: Record<string, unknown>;
  run(args: z.output<Schema>, context: MetaToolContext): Promise<CallToolResult | string>;
}

/** Declare a meta-tool (keeps the handler's argument type tied to its schema). */
export function defineMetaTool<Schema extends z.ZodType>(tool: MetaTool<Schema>): MetaTool {
  return tool;
}

// JSON of every meta-tool's entry, by name, as this function computed it at build time
// (scripts/bundle.mjs puts it into the bundle): converting the zod schemas cost ~5 ms of every
// start, nearly all of it zod's JSON Schema code running cold. Undefined when running from source.
declare const LOADOUT_META_TOOL_LISTING: string | undefined;
let builtListing: Readonly<Record<string, Tool>> | undefined;

/** The tools/list entry of a meta-tool: short, with no output schema, to keep the idle list small. */
export function listedMetaTool(tool: MetaTool): Tool {
  if (typeof LOADOUT_META_TOOL_LISTING === 'string') builtListing ??= JSON.parse(LOADOUT_META_TOOL_LISTING) as Record<string, Tool>;
  const built = builtListing?.[tool.name];
  if (built) return built;
  const { $schema: _schema, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, inputSchema: compactSchema(inputSchema) as Tool['inputSchema'] };
}

// Every idle tools/list carries these schemas, so keywords the call-time check covers anyway are
// dropped: `additionalProperties: false` and numeric bounds (lengths, ranges, item counts). The
// strict zod schema still enforces them when the call arrives, with a readable error.
const ENFORCED_AT_CALL = new Set(['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);

function compactSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compactSchema);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      // A keyword's value is a number or `false`; a property of the same name would be a schema object.
      .filter(([key, value]) => !(key === 'additionalProperties' && value === false) && !(ENFORCED_AT_CALL.has(key) && typeof value === 'number'))
      .map(([key, value]) => [key, compactSchema(value)]),
  );
}

/** A plain text result. */
export function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

/** One JSON object as text, the answer shape of the optimization tools. */
export function jsonResult(value: unknown): CallToolResult {
  return textResult(JSON.stringify(value));
}

/** An error result the agent can act on. */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A readable sentence for invalid meta-tool arguments, with a valid example. */
export function describeInvalidArguments(tool: MetaTool, error: z.ZodError): string {
  const problems = error.issues.map((issue) => {
    const at = issue.path.length ? issue.path.join('.') : 'arguments';
    // zod says "expected string, received undefined"; an agent understands "required" faster.
    const missing = issue.code === 'invalid_type' && issue.path.length > 0 && / received undefined$/.test(issue.message);
    return `${at}: ${missing ? `required (${issue.expected})` : issue.message}`;
  });
  return `Invalid arguments for ${tool.name}: ${problems.join('; ')}. Example: ${JSON.stringify(tool.example)}`;
}
