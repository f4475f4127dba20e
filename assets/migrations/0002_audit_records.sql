-- The audit trail in Postgres mode: one row per record, the record as written (JSON, the shape
-- `loadout audit --json` prints), with the columns the reader filters by. Batches arrive as one
-- multi-row INSERT; rows older than audit.retention_days go at most once a day (audit_retention).
CREATE TABLE audit_records (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL,
  principal_id text,
  principal_subject text,
  server text,
  record json NOT NULL
);
CREATE INDEX audit_records_at ON audit_records (at);

-- The UTC day retention last ran: the one replica whose UPDATE moves it deletes that day.
CREATE TABLE audit_retention (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  last_day date NOT NULL
);
INSERT INTO audit_retention (last_day) VALUES ('1970-01-01');
