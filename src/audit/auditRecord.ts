// What one audit record says, as a zod schema (the shape written and read back), and how an event
// a caller hands in becomes one: the arguments digested (sha-256 of their RFC 8785 canonical JSON),
// and kept themselves only when configured (and nested no deeper than MAX_JSON_DEPTH). Knows
// nothing of where records are written.
import { hash } from 'node:crypto';
import * as z from 'zod';
import type { Principal } from '../identity/index.js';
import { canonicalJson, nestedDeeperThan } from '../shared/index.js';

/**
 * What was done: a downstream tool's call, an equip, a toolset change, another meta-tool, an HTTP
 * request, a prompt's or resource's request (recorded when the policy refuses it), or a principal's
 * own authorization of a `credentials: per-user` server.
 */
export const AuditActionSchema = z.enum([
  'tool-call',
  'equip',
  'toolset-change',
  'meta-tool',
  'request',
  'prompt',
  'resource',
  'authorization',
]);
export type AuditAction = z.infer<typeof AuditActionSchema>;

/**
 * How it ended: answered (`ok`), answered with an isError result (`error`), failed with a protocol
 * error (`failed`), or refused before it ran: for the caller's credentials, by the policy, by a rate
 * limit, or because the session it named belongs to another principal (`denied-session`).
 */
export const AuditOutcomeSchema = z.enum([
  'ok',
  'error',
  'failed',
  'denied-authorization',
  'denied-policy',
  'rate-limited',
  'denied-session',
]);
export type AuditOutcome = z.infer<typeof AuditOutcomeSchema>;

/** One line of the trail. */
export const AuditRecordSchema = z.object({
  /** When the request arrived (ISO 8601, UTC). */
  time: z.iso.datetime(),
  /** The record's own id, unique in the fleet (`<replica>.<n>`): a record written twice (a retry whose answer was lost) is kept once. Absent before 0.3. */
  id: z.string().optional(),
  /** The id of the replica (the gateway process) that answered, drawn at its start; absent before 0.3. */
  replica: z.string().optional(),
  /** Who made it; null when it was refused before anyone was known (no or a bad access token). */
  principal: z.object({ id: z.string(), issuer: z.string(), subject: z.string(), groups: z.array(z.string()) }).nullable(),
  action: AuditActionSchema,
  /** The JSON-RPC method (`tools/call`), or an HTTP request's method and path. */
  method: z.string(),
  /** The server behind the tool; absent for loadout's own meta-tools. */
  server: z.string().optional(),
  /**
   * The tool by its own name: the server's (`read_text_file`), or a meta-tool's; a prompt's name, a
   * resource's URI. Absent for a call of a name that is no tool. (Before 0.3, a refused call had the name it was called by.)
   */
  tool: z.string().optional(),
  /** A tools/call's name as the caller called it: the exposed (flattened) name (`files_read_text_file`), a `server.tool` id, a meta-tool's name. */
  exposed_tool: z.string().optional(),
  /** `app`: a call an App's View made by its server's own tool name (docs/apps.md); absent for every other call. */
  via: z.enum(['app']).optional(),
  /** sha-256 (hex) of the arguments' canonical JSON (RFC 8785); `{}` when the call had none. */
  arguments_sha256: z.string().optional(),
  /** The arguments themselves, only with `audit.arguments: true`. */
  arguments: z.unknown().optional(),
  outcome: AuditOutcomeSchema,
  duration_ms: z.number().nonnegative(),
  /** The JSON-RPC request id. */
  request_id: z.union([z.string(), z.number()]).optional(),
  /** Why it was refused or failed, in one line. */
  detail: z.string().optional(),
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

/** What a caller hands the trail: its arguments are digested later, off the call's path. */
export interface AuditEvent {
  /** Date.now() when the request arrived. */
  readonly startedAt: number;
  readonly principal: Principal | undefined;
  readonly action: AuditAction;
  readonly method: string;
  readonly server?: string;
  /** The tool's own name (see AuditRecord.tool). */
  readonly tool?: string;
  /** The name a tools/call called it by (see AuditRecord.exposed_tool). */
  readonly exposedTool?: string;
  /** Who made it (see AuditRecord.via). */
  readonly via?: 'app';
  /** The call's arguments (a tools/call has some, even `{}`); undefined for a request that has none. */
  readonly arguments?: unknown;
  readonly hasArguments: boolean;
  readonly outcome: AuditOutcome;
  readonly durationMs: number;
  readonly requestId?: string | number;
  readonly detail?: string;
}

/** Who writes a record, and its id: stamped by the trail when the record is made, off the call's path. */
export interface AuditStamp {
  readonly id: string;
  readonly replica: string;
}

/** The record of `event`, stamped `stamp`; with `withArguments`, it carries the arguments themselves too. */
export function auditRecordOf(event: AuditEvent, withArguments: boolean, stamp: AuditStamp): AuditRecord {
  const { principal } = event;
  // Assigned one key at a time, in the schema's order (the JSON line's order): built from spread
  // literals, a record made a short-lived object per optional key, and records are made per call.
  const record: Partial<AuditRecord> = {
    time: new Date(event.startedAt).toISOString(),
    id: stamp.id,
    replica: stamp.replica,
    principal: principal ? { id: principal.id, issuer: principal.issuer, subject: principal.subject, groups: [...principal.groups] } : null,
    action: event.action,
    method: event.method,
  };
  if (event.server !== undefined) record.server = event.server;
  if (event.tool !== undefined) record.tool = event.tool;
  if (event.exposedTool !== undefined) record.exposed_tool = event.exposedTool;
  if (event.via !== undefined) record.via = event.via;
  if (event.hasArguments) {
    const args = event.arguments ?? {};
    const text = canonicalJson(args);
    record.arguments_sha256 = digestOf(text);
    // Arguments nested past the limit would overflow JSON.stringify when the record is written: the digest stands for them.
    if (withArguments && !nestedDeeperThan(text)) record.arguments = args;
  }
  record.outcome = event.outcome;
  record.duration_ms = Math.round(event.durationMs * 1000) / 1000;
  if (event.requestId !== undefined) record.request_id = event.requestId;
  if (event.detail !== undefined) record.detail = event.detail;
  return record as AuditRecord;
}

/** sha-256 (hex) of `value`'s RFC 8785 canonical JSON: equal arguments digest alike, whatever their key order. */
export function argumentsDigest(value: unknown): string {
  return digestOf(canonicalJson(value));
}

function digestOf(canonicalText: string): string {
  // The one-shot hash: a Hash object per record cost more than the digest itself.
  return hash('sha256', canonicalText, 'hex');
}
