// The shapes of `auth:` (who loadout trusts to say who is calling, over HTTP) and `policy:` (who
// may see and use what) in servers.yaml. Only shapes: checking tokens and applying rules is the
// identity layer's job.
import * as z from 'zod';
import { fileObject } from './fileObject.js';
import { ToolsetNameSchema } from './toolsetName.js';

/** `auth:` — loadout as an OAuth 2.1 resource server: JWT access tokens from one issuer. */
export const AuthSettingsSchema = fileObject({
  /** The authorization server's issuer URL, exactly as its tokens' `iss` says it. */
  issuer: z.url(),
  /** loadout's own canonical URL (RFC 8707), the only audience accepted; default: the URL it serves /mcp at. */
  audience: z.url().optional(),
  /** Scopes every token must carry; fewer get 403 insufficient_scope. */
  scopes: z.array(z.string().min(1)).default([]),
  /** The token claim that lists the caller's groups (an array of strings, or one space-separated string). */
  groups_claim: z.string().min(1).default('groups'),
  /** The issuer's key set; default: the `jwks_uri` of its published metadata. */
  jwks_uri: z.url().optional(),
});
export type AuthSettings = z.infer<typeof AuthSettingsSchema>;

/** A server's thing by name: `server.name` (a tool, a prompt). */
const NamespacedNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\..+$/, 'name it as server.name');

/** One grant: what (servers, single tools, prompts, resources) to whom (groups, subjects, or everyone). */
const PolicyRuleSchema = fileObject({
  /** Callers in any of these groups (from the token's groups claim, or `policy.local.groups`). */
  groups: z.array(z.string().min(1)).default([]),
  /** Callers with one of these subjects (the token's `sub`, or `policy.local.subject`). */
  subjects: z.array(z.string().min(1)).default([]),
  /** Every caller. */
  everyone: z.boolean().default(false),
  /** Whole servers: their tools, prompts and resources. */
  servers: z.array(z.string().min(1)).default([]),
  /** Single tools, `server.tool`. */
  tools: z.array(NamespacedNameSchema).default([]),
  /** Single prompts, `server.prompt`. */
  prompts: z.array(NamespacedNameSchema).default([]),
  /** The resources (and resource templates) of these servers. */
  resources: z.array(z.string().min(1)).default([]),
  /**
   * Saved toolsets by name, whoever saved them: listed and equipped by these callers, changed and
   * deleted only by their owner. Only the toolset: its tools are granted (or not) by the rest.
   */
  toolsets: z.array(ToolsetNameSchema).default([]),
}).refine((rule) => rule.everyone || rule.groups.length > 0 || rule.subjects.length > 0, {
  message: 'a rule names whom it grants to: groups, subjects, or everyone: true',
});

/** `policy:` — who may see and use what. With any rule, everything no rule grants is denied. */
export const PolicySettingsSchema = fileObject({
  /** Who the caller is where no token says (stdio, HTTP without auth or --token). */
  local: fileObject({ subject: z.string().min(1).default('local'), groups: z.array(z.string().min(1)).default([]) }).prefault({}),
  rules: z.array(PolicyRuleSchema).default([]),
});
export type PolicySettings = z.infer<typeof PolicySettingsSchema>;
export type PolicyRule = PolicySettings['rules'][number];

/** A number of calls a minute, at least one. */
const CallsPerMinuteSchema = z.number().int().positive();

/**
 * `limits:` — how many tools/call each principal may make a minute, in all and on each server.
 * Counted in memory, per loadout process (docs/http-and-security.md#rate-limits).
 */
export const LimitsSettingsSchema = fileObject({
  /** Every call of one principal, meta-tools included. */
  calls_per_minute: CallsPerMinuteSchema.optional(),
  /** One principal's calls of one server's tools (any server not named in `servers`). */
  server_calls_per_minute: CallsPerMinuteSchema.optional(),
  /** One principal's calls of this server's tools, in place of server_calls_per_minute. */
  servers: z.record(z.string().min(1), CallsPerMinuteSchema).default({}),
});
export type LimitsSettings = z.infer<typeof LimitsSettingsSchema>;
