// The shapes of loadout's own files (servers.yaml, toolset files, state.json) as zod schemas:
// the single source of their types. Our files are parsed strictly so a typo fails loudly, named
// as a typo (fileObject).
import * as z from 'zod';
import { isWholeCommandLine, splitCommandEntry } from './commandLine.js';
import { fileObject } from './fileObject.js';
import { AuditSettingsSchema } from './auditSettings.js';
import { AuthSettingsSchema, LimitsSettingsSchema, PolicySettingsSchema } from './identitySettings.js';
import { OptimizationSettingsSchema } from './optimizationState.js';
import { ServerSandboxSchema, withGatewaySandbox } from './sandboxSettings.js';
import { ToolsetNameSchema } from './toolsetName.js';

/** Server names become the `server` part of `server.tool`, so they may not contain a dot. */
const ServerNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'server names use letters, digits, "_" and "-" (at most 64), starting with a letter or digit');

export { ToolsetNameSchema } from './toolsetName.js';

/**
 * A name a proxy in front of `serve --http` sends as Host (`mcp.example.com`; with `:PORT`, only on
 * that port): the request guard accepts it besides the bound address. No scheme, path or user.
 */
export const AllowedHostSchema = z
  .string()
  .refine(
    (value) => /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(value) && !value.startsWith('.') && !value.startsWith('-'),
    'an allowed host is a name or address, optionally with :PORT (mcp.example.com, 10.0.0.5:8443, [::1]:7077), without scheme or path',
  );

/** Per-tool switchboard entry in servers.yaml; `hash` and `stale` are written by discovery. */
const ToolSettingSchema = fileObject({
  enabled: z.boolean().optional(),
  description: z.string().optional(),
  stale: z.boolean().optional(),
  hash: z.string().optional(),
  /** The user's own words for the tool, searched by discover-all-tools (kept by refresh). */
  keywords: z.array(z.string().min(1).max(100)).max(50).optional(),
});

/**
 * OAuth settings of an HTTP/SSE server. Without them loadout registers itself with the server's
 * authorization server (dynamic client registration); a pre-registered client gives its id here.
 */
export const OAuthSettingsSchema = fileObject({
  /** Scopes to ask for when the server does not advertise them. */
  scope: z.string().min(1).optional(),
  /** A client registered by hand with the authorization server (skips dynamic registration). */
  client_id: z.string().min(1).optional(),
  /** Its secret, if it is a confidential client; `${VAR}` references are expanded. */
  client_secret: z.string().min(1).optional(),
  /** Loopback port of the redirect `loadout auth` listens on (a pre-registered client needs a fixed one). */
  callback_port: z.number().int().min(1).max(65535).optional(),
});
export type OAuthSettings = z.infer<typeof OAuthSettingsSchema>;

// Settings every server has, whatever its transport.
const ServerSettingsShape = {
  always_on: z.boolean().default(false),
  enabled: z.boolean().default(true),
  idle_timeout_minutes: z.number().nonnegative().default(5),
  timeout_seconds: z.number().positive().default(60),
  // A tool key written with no value (`search:`) means "known, defaults apply"; an empty
  // `tools:` key means "no tools listed yet".
  tools: z
    .record(z.string(), ToolSettingSchema.nullable())
    .nullish()
    .transform((tools) => tools ?? undefined),
};

/** The address field a transport needs, with the message for a server that lacks it. */
function requiredAddress(field: 'command' | 'url', type: 'stdio' | 'sse' | 'http') {
  return z.string({ error: (issue) => (issue.input === undefined ? `a ${type} server needs "${field}"` : undefined) }).min(1);
}

const StdioServerSchema = fileObject({
  type: z.literal('stdio'),
  // Described so that the parsed copies of servers.yaml written before this rule are re-keyed (the hash reads the description, not the check).
  command: requiredAddress('command', 'stdio').describe('the program alone; its arguments go in args'),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
  /** The sandbox it runs in (see sandboxSettings.ts); left out, `gateway.sandbox` decides. */
  sandbox: ServerSandboxSchema.optional(),
  // Named here only to refuse it in one clear line: a stdio server has no OAuth to bring.
  credentials: z
    .never({ error: 'credentials applies to HTTP and SSE servers only: a stdio server has no OAuth for each user to bring' })
    .optional(),
  ...ServerSettingsShape,
}).superRefine((server, context) => {
  // Refused before any start: spawn would look for a program named "uvx mcp-server-fetch".
  if (!isWholeCommandLine(server.command, server.cwd)) return;
  const split = splitCommandEntry(server.command, server.args);
  context.addIssue({
    code: 'custom',
    path: ['command'],
    message: `${JSON.stringify(server.command)} is a whole command line; \`command\` is the program alone and \`args\` its arguments: write command: ${JSON.stringify(split.command)} and args: ${JSON.stringify(split.args)}`,
  });
});

function remoteServerSchema<T extends 'sse' | 'http'>(type: T) {
  return fileObject({
    type: z.literal(type),
    url: requiredAddress('url', type),
    headers: z.record(z.string(), z.string()).default({}),
    // HTTP/SSE servers answer 401 with OAuth by default; `false` turns that off.
    oauth: z.union([z.boolean(), OAuthSettingsSchema]).optional(),
    /**
     * Whose OAuth authorization the server's requests carry: `shared`, the one `loadout auth`
     * stores; `per-user`, each principal's own, asked of them on their first call.
     */
    credentials: z.enum(['shared', 'per-user']).default('shared'),
    ...ServerSettingsShape,
  }).refine((server) => server.credentials === 'shared' || (server.oauth !== false && !sendsOwnAuthorization(server.headers)), {
    error: 'credentials: per-user needs OAuth: remove oauth: false and any Authorization header',
    path: ['credentials'],
  });
}

/**
 * One downstream server as written in servers.yaml. `type` may be left out: a server with a
 * `url` is then `http`, any other `stdio`. Parsed, it always carries its `type`, so code
 * narrows on it instead of asserting that `command` or `url` is there.
 */
export const ServerConfigSchema = z.preprocess(
  withInferredType,
  z.discriminatedUnion('type', [StdioServerSchema, remoteServerSchema('sse'), remoteServerSchema('http')]),
);
export type ServerConfig = z.infer<typeof ServerConfigSchema>;

function withInferredType(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input) || 'type' in input) return input;
  return { type: 'url' in input ? 'http' : 'stdio', ...input };
}

/** Names of the enabled servers among `configs`, in config order. */
export function enabledServerNames(configs: Readonly<Record<string, ServerConfig>>): string[] {
  return Object.entries(configs)
    .filter(([, config]) => config.enabled)
    .map(([name]) => name);
}

/** `gateway.code_mode`: what one run-code script may spend. */
export const CodeModeSettingsSchema = fileObject({
  /** Wall time of a run, start to answer; a call's timeout_ms may only lower it. */
  timeout_ms: z.number().int().positive().default(30_000),
  /** Memory the interpreter may allocate, in MB. */
  memory_mb: z.number().int().positive().default(64),
  /** Tool calls and searches one run may make. */
  max_calls: z.number().int().positive().default(200),
  /** Longest answer (return value and console output) in bytes; a longer one is cut, with a notice. */
  max_answer_bytes: z.number().int().positive().default(20_000),
});
export type CodeModeSettings = z.infer<typeof CodeModeSettingsSchema>;

/** Gateway-wide settings under `gateway:` in servers.yaml. */
export const GatewaySettingsSchema = fileObject({
  /** The key the client registered loadout under; Claude Code prefixes tools with `mcp__<key>__`. */
  client_key: z.string().min(1).default('loadout'),
  /** How long equip/unequip wait for the client to re-read tools/list after list_changed. */
  relist_wait_ms: z.number().int().nonnegative().default(2000),
  /** Servers discovered at once on a cold start. */
  discovery_concurrency: z.number().int().positive().default(4),
  /** Per-server limit for start + tools/list during discovery. */
  discovery_timeout_seconds: z.number().positive().default(30),
  /** How often connected servers are pinged; 0 turns health checks off. Fractions allowed. */
  health_interval_seconds: z.number().nonnegative().default(30),
  /**
   * First reconnect delay of a down always-on server, or of one that crashed with resource
   * subscriptions; doubles per failed attempt (with jitter).
   */
  reconnect_base_seconds: z.number().positive().default(1),
  /** Longest reconnect delay (see reconnect_base_seconds). */
  reconnect_max_seconds: z.number().positive().default(60),
  /** Hide tools whose schema or description changed upstream since their `hash` was approved. */
  block_changed_tools: z.boolean().default(false),
  /** Most principals whose views and equipped sets are held in memory; past it the least recently used idle one is dropped. */
  principals_in_memory: z.number().int().positive().default(1000),
  /** serve --http: Host names a proxy sends that are accepted besides the bound address (with --allowed-host). */
  allowed_hosts: z.array(AllowedHostSchema).default([]),
  /** The limits of a run-code script (see docs/code-mode.md). */
  code_mode: CodeModeSettingsSchema.prefault({}),
  /** Every stdio server runs in a sandbox with the defaults unless its entry says `sandbox: false` (or gives its own). */
  sandbox: z.boolean().default(false),
});
export type GatewaySettings = z.infer<typeof GatewaySettingsSchema>;

/** The whole servers.yaml. Sections left out are parsed from `{}` (prefault), so their defaults apply. */
/** An embeddings endpoint for model-backed search ranking (optional; search works offline without). */
export const EmbeddingsSettingsSchema = fileObject({
  /** Base URL: `POST {url}/api/embed` (ollama) or `POST {url}/v1/embeddings` (openai). */
  url: z.url(),
  api: z.enum(['ollama', 'openai']),
  model: z.string().min(1),
  /** Prepended to a query before embedding (e.g. "search_query: "). */
  query_prefix: z.string().default(''),
  /** Prepended to each tool's text before embedding (e.g. "search_document: "). */
  document_prefix: z.string().default(''),
  /** Sent with every request; values may use ${ENV_VAR}. */
  headers: z.record(z.string(), z.string()).optional(),
  timeout_ms: z.number().int().positive().default(3000),
});
export type EmbeddingsSettings = z.infer<typeof EmbeddingsSettingsSchema>;

export const SearchSettingsSchema = fileObject({
  embeddings: EmbeddingsSettingsSchema.optional(),
});
export type SearchSettings = z.infer<typeof SearchSettingsSchema>;

export const ServersFileSchema = fileObject({
  servers: z
    .record(ServerNameSchema, ServerConfigSchema)
    .nullable()
    .transform((s) => s ?? {})
    .default({}),
  gateway: GatewaySettingsSchema.prefault({}),
  optimization: OptimizationSettingsSchema.prefault({}),
  search: SearchSettingsSchema.prefault({}),
  /** HTTP callers prove who they are with an issuer's access tokens (see identitySettings.ts). */
  auth: AuthSettingsSchema.optional(),
  /** Who may see and use which servers, tools, prompts and resources (see identitySettings.ts). */
  policy: PolicySettingsSchema.prefault({}),
  /** How many calls each principal may make a minute, in all and per server (see identitySettings.ts). */
  limits: LimitsSettingsSchema.prefault({}),
  /** The audit trail of who called what (see auditSettings.ts). */
  audit: AuditSettingsSchema.prefault({}),
}).overwrite((file) => ({ ...file, servers: withGatewaySandbox(file.servers, file.gateway.sandbox) }));
export type ServersFile = z.infer<typeof ServersFileSchema>;

/**
 * The OAuth settings of a server that may use OAuth: an HTTP or SSE server, unless `oauth: false`
 * or it sends its own `Authorization` header (a static token is not loadout's to replace).
 */
export function oauthSettingsOf(server: ServerConfig): OAuthSettings | undefined {
  if (server.type === 'stdio' || server.oauth === false) return undefined;
  if (sendsOwnAuthorization(server.headers)) return undefined;
  return typeof server.oauth === 'object' ? server.oauth : {};
}

function sendsOwnAuthorization(headers: Record<string, string>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
}

/** A namespaced tool name as stored: `server.tool`. */
const NamespacedToolSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\.[\s\S]+$/, 'tools are written "server.tool"');

/**
 * A reference to a tool: `"server.tool"`, or an object as hand-written toolsets may hold it,
 * `{namespacedName: "server.tool"}` or `{server, tool}`; always read as the `server.tool` string.
 */
export const ToolRefSchema = z.union([
  NamespacedToolSchema,
  z.strictObject({ namespacedName: NamespacedToolSchema }).transform((ref) => ref.namespacedName),
  z.strictObject({ server: ServerNameSchema, tool: z.string().min(1) }).transform((ref) => `${ref.server}.${ref.tool}`),
]);

/**
 * Who saved a toolset, when an identity said who was calling (a static token, or an `auth:`
 * issuer's subject): only that principal lists, equips, changes or deletes it. `id` is the
 * principal's id (a hash, what everything per caller is keyed by); `subject` is who it names, for
 * the operator's `loadout toolset list --all` (a static token's subject is its hash too).
 */
export const ToolsetOwnerSchema = fileObject({
  id: z.string().regex(/^[0-9a-f]{32}$/, 'an owner id is a principal id: 32 hex digits'),
  subject: z.string().min(1),
});
export type ToolsetOwner = z.infer<typeof ToolsetOwnerSchema>;

/** A saved toolset file, `<config dir>/toolsets/<name>.yaml`. */
export const ToolsetSchema = fileObject({
  name: ToolsetNameSchema,
  /** Absent: a toolset for everyone (hand-written, saved over stdio or by the CLI, or saved before owners were kept). */
  owner: ToolsetOwnerSchema.optional(),
  description: z.string().optional(),
  // The server part is a server name (no dot); the tool part is whatever the server calls it:
  // real servers use spaces and dots ("read file", "v1.search"), so anything non-empty goes.
  tools: z.array(ToolRefSchema).default([]),
  /** Prompts to list beside those of the tools' servers, written "server.prompt". */
  prompts: z.array(z.string().regex(/^[^.\s]+\.\S+$/, 'prompts are written "server.prompt"')).optional(),
});
export type Toolset = z.infer<typeof ToolsetSchema>;
