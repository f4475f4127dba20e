-- Audit records name their replica and tell a tool's own name from the name it was called by, and
-- each has an id: a batch sent again (from a replica's spool, after an answer lost with the
-- connection) is kept once. Rows written before have none of these (NULL: never a conflict).
ALTER TABLE audit_records
  ADD COLUMN record_id text,
  ADD COLUMN replica text,
  ADD COLUMN tool text,
  ADD COLUMN exposed_tool text;
CREATE UNIQUE INDEX audit_records_record_id ON audit_records (record_id);
