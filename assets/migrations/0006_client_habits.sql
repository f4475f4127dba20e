-- What the gateway learned of each MCP client (by its clientInfo name and version) across sessions
-- and replicas: whether it re-reads tools/list after a list_changed. A plain kind like the others.
CREATE TABLE client_habits (
  key text PRIMARY KEY,
  format smallint NOT NULL,
  revision bigint NOT NULL,
  doc json NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE TRIGGER client_habits_revision BEFORE INSERT OR UPDATE ON client_habits FOR EACH ROW EXECUTE FUNCTION store_next_revision();
CREATE TRIGGER client_habits_changed AFTER INSERT OR UPDATE OR DELETE ON client_habits FOR EACH ROW EXECUTE FUNCTION store_note_change();
