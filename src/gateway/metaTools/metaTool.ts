// The shape of a meta-tool (a tool loadout itself answers), and the helpers that turn its zod
// input schema into the JSON Schema clients see and its errors into readable isError results.
import type { Server, CallToolResult, ServerContext, Tool, ToolAnnotations } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { RegistryChange, RegistrySnapshot } from '../../registry/index.js';
import type { GatewayContext } from '../context.js';

/** What a meta-tool may do with the client session it runs in (GatewaySession is one). */
export interface MetaToolSession {
  /** The session's client-facing Server (to ask the client for sampling). */
  readonly server: Server;
  /** The current exposed set. */
  readonly snapshot: RegistrySnapshot;
  /** The exposed set once start-up discovery has settled. */
  settledSnapshot(): Promise<RegistrySnapshot>;
  /** Equip a saved toolset (or `all`), announcing the change. */
  equip(name: string): Promise<RegistryChange>;
  /** Withdraw the equipped toolset. */
  unequip(): Promise<RegistryChange>;
  /**
   * Whose searches and what followed them search learns from: the session, or the principal's set
   * a 2026-07-28 HTTP request is served with (each such request has a session of its own).
   */
  readonly searcher: object;
  /** Call any enabled catalog tool, equipped or not, as the session routes calls (call-tool). */
  callAnyTool(tool: string, args: Record<string, unknown> | undefined, extra: ServerContext): Promise<CallToolResult>;
  /**
   * A tools/call as if the client had sent it, decided by the session's router like every other
   * (run-code's calls are call-tool calls made this way: limits, policy, audit and telemetry alike).
   */
  callAsClient(name: string, args: Record<string, unknown>, extra: ServerContext): Promise<CallToolResult>;
  /**
   * Whether the client has shown it never re-reads tools/list after a change, so equipped tools
   * reach its model only through call-tool.
   */
  readonly equippedToolsUnlisted?: boolean;
}

/** What a meta-tool handler can reach. */
export interface MetaToolContext {
  gateway: GatewayContext;
  session: MetaToolSession;
  extra: ServerContext;
}

/** A tool answered by loadout itself. */
export interface MetaTool<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: Schema;
  /** A valid call, shown in the error for a malformed one. */
  example: Record<string, unknown>;
  /**
   * Whether it changes state (toolsets, the equipped set, optimization data): such meta-tools of
   * one session take effect one at a time in the order their requests arrived, and any other
   * request waits for those that arrived before it.
   */
  changesState?: boolean;
  /**
   * What a client may assume of it (clients decide from these whether to ask the user first:
   * Codex CLI refuses an unannotated tool under `codex exec`). Honest, never flattering: one of
   * the presets below.
   */
  annotations: ToolAnnotations;
  run(args: z.output<Schema>, context: MetaToolContext): Promise<CallToolResult | string>;
}

// Every idle tools/list carries these, so a hint is written only where it differs from the
// spec's default (readOnlyHint false, destructiveHint true, openWorldHint true); call-tool's are
// spelt out, since it is the one that claims nothing.
/** Reads loadout's catalog or state and changes nothing. */
export const READS_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
/** Writes loadout's own files or equipped set, adding or replacing only what it is told. */
export const SAVES: ToolAnnotations = { destructiveHint: false, openWorldHint: false };
/** Asks the configured model and stores what it wrote beside what is there. */
export const ASKS_MODEL: ToolAnnotations = { destructiveHint: false };
/** Removes or replaces something the user saved. */
export const DELETES: ToolAnnotations = { openWorldHint: false };
/** Reaches any downstream tool, which may write, delete or reach the world: claims nothing. */
export const REACHES_ANY_TOOL: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, openWorldHint: true };

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
  const { $schema: _schema, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: compactSchema(inputSchema) as Tool['inputSchema'],
    annotations: tool.annotations,
  };
}

// Every idle tools/list carries these schemas, so keywords the call-time check covers anyway are
// dropped: `additionalProperties: false` and numeric bounds (lengths, ranges, item counts), and
// `propertyNames: {type: "string"}`, which every JSON object's keys are. The strict zod schema
// still enforces them when the call arrives, with a readable error.
const ENFORCED_AT_CALL = new Set(['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);

function compactSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(compactSchema);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      // A keyword's value is a number or `false`; a property of the same name would be a schema object.
      .filter(
        ([key, value]) =>
          !(key === 'additionalProperties' && value === false) &&
          !(ENFORCED_AT_CALL.has(key) && typeof value === 'number') &&
          !(key === 'propertyNames' && isStringKeys(value)),
      )
      .map(([key, value]) => [key, compactSchema(value)]),
  );
}

// `{type: "string"}` and nothing else: what zod's record() says of its keys.
function isStringKeys(value: unknown): boolean {
  return JSON.stringify(value) === '{"type":"string"}';
}

/**
 * A meta-tool's arguments, parsed. Keys it does not know at the top level are ignored rather than
 * refused: clients add their own (Gemini CLI adds `wait_for_previous` to every tool's schema and
 * its models send it), and refusing them fails every call. A key misspelt inside a value is still
 * refused, and so is a wrong value.
 */
export function parseMetaToolArguments<Schema extends z.ZodType>(
  tool: MetaTool<Schema>,
  args: Record<string, unknown>,
): z.ZodSafeParseResult<z.output<Schema>> {
  const parsed = tool.input.safeParse(args);
  if (parsed.success) return parsed;
  const unknownKeys = new Set(
    parsed.error.issues.flatMap((issue) => (issue.code === 'unrecognized_keys' && issue.path.length === 0 ? issue.keys : [])),
  );
  if (!unknownKeys.size) return parsed;
  return tool.input.safeParse(Object.fromEntries(Object.entries(args).filter(([key]) => !unknownKeys.has(key))));
}

/** A readable sentence for invalid meta-tool arguments, with a valid example. */
export function describeInvalidArguments(tool: MetaTool, error: z.ZodError, args: Record<string, unknown>): string {
  const problems = error.issues.map((issue) => {
    const at = issue.path.length ? issue.path.join('.') : 'arguments';
    // zod says "expected string, received undefined"; an agent understands "required" faster.
    const missing = issue.code === 'invalid_type' && issue.path.length > 0 && valueAt(args, issue.path) === undefined;
    return `${at}: ${missing ? `required (${issue.expected})` : issue.message}`;
  });
  return `Invalid arguments for ${tool.name}: ${problems.join('; ')}. Example: ${JSON.stringify(tool.example)}`;
}

// What the arguments hold at an issue's path: undefined where a key or an item is missing.
function valueAt(args: Record<string, unknown>, path: readonly PropertyKey[]): unknown {
  let value: unknown = args;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = Reflect.get(value, key);
  }
  return value;
}
