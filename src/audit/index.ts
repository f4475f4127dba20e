// audit: the trail of who called what. Records (one per tool call, equip, toolset change and
// refusal) are handed in after each answer, written in batches to the day files of the data dir
// and optionally copied as JSON lines for a SIEM, and read back for `loadout audit`.
export {
  AuditRecordSchema,
  argumentsDigest,
  type AuditAction,
  type AuditEvent,
  type AuditOutcome,
  type AuditRecord,
} from './auditRecord.js';
export { auditDir, dayFileName, type AuditSink, type DayLines } from './auditSinks.js';
export { AuditTrail, openAuditTrail, type AuditTrailOptions } from './auditTrail.js';
export { readAuditTrail, type AuditFilter, type AuditReading } from './auditReader.js';
