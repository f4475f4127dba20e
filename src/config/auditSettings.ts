// The shape of `audit:` in servers.yaml: whether loadout keeps an audit trail of who called what,
// whether records carry the arguments themselves, and a second copy for a SIEM. Only the shape:
// writing and reading records is the audit layer's job.
import * as z from 'zod';
import { fileObject } from './fileObject.js';

/** `audit:` — one record per tool call, equip, toolset change and refusal (docs/http-and-security.md#audit-trail). */
export const AuditSettingsSchema = fileObject({
  /** Keep the trail (JSON lines in `<data dir>/audit/`, one file per UTC day). */
  enabled: z.boolean().default(true),
  /** Record each call's arguments themselves, not only their sha-256 digest. */
  arguments: z.boolean().default(false),
  /** Also write each record as a JSON line here: a file path, or `stdout` (only with `serve --http`). */
  copy_to: z.string().min(1).optional(),
  /** Day files older than this many days are deleted; 0 keeps them all. */
  retention_days: z.number().int().nonnegative().default(30),
  /** Records wait at most this long in memory before they are written (a killed process loses them). */
  flush_ms: z.number().int().positive().max(60_000).default(1000),
  /**
   * With the team store: the most the spool in the data dir holds (MB) while the store cannot take
   * records; past it, new records are dropped (and counted).
   */
  spool_max_mb: z.number().positive().default(256),
});
export type AuditSettings = z.infer<typeof AuditSettingsSchema>;
