// audit: the trail of who called what. Records (one per tool call, equip, toolset change and
// refusal) are handed in after each answer, written in batches to the day files of the data dir (or the store's table in Postgres mode)
// and optionally copied as JSON lines for a SIEM, and read back for `loadout audit`.
export type { AuditAction, AuditEvent, AuditOutcome, AuditRecord } from './auditRecord.js';
export { AuditTrail, openAuditTrail } from './auditTrail.js';
export { readAuditTrail } from './auditReader.js';
export { readStoredAuditTrail } from './storedTrail.js';
