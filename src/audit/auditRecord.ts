// What one audit record says, as a zod schema (the shape written and read back), and how an event
// a caller hands in becomes one: the arguments digested (sha-256 of their RFC 8785 canonical JSON),
// and kept themselves only when configured. Knows nothing of where records are written.
import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import * as z from 'zod';
import type { Principal } from '../identity/index.js';

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
  /** Who made it; null when it was refused before anyone was known (no or a bad access token). */
  principal: z.object({ id: z.string(), issuer: z.string(), subject: z.string(), groups: z.array(z.string()) }).nullable(),
  action: AuditActionSchema,
  /** The JSON-RPC method (`tools/call`), or an HTTP request's method and path. */
  method: z.string(),
  /** The server behind the tool; absent for loadout's own meta-tools. */
  server: z.string().optional(),
  /** The tool as the caller named it (a meta-tool's name, an equipped name, or `server.tool`); a prompt's name, a resource's URI. */
  tool: z.string().optional(),
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
  readonly tool?: string;
  /** The call's arguments (a tools/call has some, even `{}`); undefined for a request that has none. */
  readonly arguments?: unknown;
  readonly hasArguments: boolean;
  readonly outcome: AuditOutcome;
  readonly durationMs: number;
  readonly requestId?: string | number;
  readonly detail?: string;
}

/** The record of `event`; with `withArguments`, it carries the arguments themselves too. */
export function auditRecordOf(event: AuditEvent, withArguments: boolean): AuditRecord {
  const { principal } = event;
  // Assigned one key at a time, in the schema's order (the JSON line's order): built from spread
  // literals, a record made a short-lived object per optional key, and records are made per call.
  const record: Partial<AuditRecord> = {
    time: new Date(event.startedAt).toISOString(),
    principal: principal ? { id: principal.id, issuer: principal.issuer, subject: principal.subject, groups: [...principal.groups] } : null,
    action: event.action,
    method: event.method,
  };
  if (event.server !== undefined) record.server = event.server;
  if (event.tool !== undefined) record.tool = event.tool;
  if (event.hasArguments) {
    const args = event.arguments ?? {};
    record.arguments_sha256 = argumentsDigest(args);
    if (withArguments) record.arguments = args;
  }
  record.outcome = event.outcome;
  record.duration_ms = Math.round(event.durationMs * 1000) / 1000;
  if (event.requestId !== undefined) record.request_id = event.requestId;
  if (event.detail !== undefined) record.detail = event.detail;
  return record as AuditRecord;
}

/** sha-256 (hex) of `value`'s RFC 8785 canonical JSON: equal arguments digest alike, whatever their key order. */
export function argumentsDigest(value: unknown): string {
  // The one-shot hash: a Hash object per record cost more than the digest itself.
  return hash('sha256', canonicalize(value) ?? 'null', 'hex');
}
