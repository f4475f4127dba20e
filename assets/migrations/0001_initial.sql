-- loadout store, schema version 1: one table per kind, a revision per row from one sequence, and a
-- change log + NOTIFY written by trigger in the writing transaction (so a change is heard only
-- once it is committed, and a replica that was away can read what it missed).
CREATE SEQUENCE store_revision;

CREATE TABLE store_changes (
  revision bigint PRIMARY KEY,
  kind text NOT NULL,
  key text NOT NULL,
  op text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX store_changes_changed_at ON store_changes (changed_at);

-- Every insert or update takes a new revision, whoever writes the row (loadout or a person with psql).
CREATE FUNCTION store_next_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.revision := nextval('store_revision');
  NEW.updated_at := now();
  RETURN NEW;
END $$;

-- On a delete the revision is a new one: a deletion is a change later than the row's last write.
CREATE FUNCTION store_note_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  row_key text;
  row_revision bigint;
  row_op text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    row_key := OLD.key;
    row_revision := nextval('store_revision');
    row_op := 'delete';
  ELSE
    row_key := NEW.key;
    row_revision := NEW.revision;
    row_op := 'put';
  END IF;
  INSERT INTO store_changes (revision, kind, key, op) VALUES (row_revision, TG_TABLE_NAME, row_key, row_op);
  PERFORM pg_notify('loadout_changes', json_build_object('table', TG_TABLE_NAME, 'key', row_key, 'op', row_op, 'revision', row_revision)::text);
  RETURN NULL;
END $$;

-- Plain kinds: the record as JSON text (json, not jsonb: key order and bytes are kept, as the
-- files keep them), and the format of the loadout that wrote it.
DO $$
DECLARE
  kind_table text;
BEGIN
  FOREACH kind_table IN ARRAY ARRAY['catalog_entries', 'discovery_records', 'toolsets', 'equipped_sets', 'sessions', 'learned_words', 'optimization_servers'] LOOP
    EXECUTE format('CREATE TABLE %I (
      key text PRIMARY KEY,
      format smallint NOT NULL,
      revision bigint NOT NULL,
      doc json NOT NULL,
      updated_at timestamptz NOT NULL
    )', kind_table);
    EXECUTE format('CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %I FOR EACH ROW EXECUTE FUNCTION store_next_revision()',
      kind_table || '_revision', kind_table);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION store_note_change()',
      kind_table || '_changed', kind_table);
  END LOOP;
END $$;

-- OAuth records, AES-256-GCM: the record's JSON encrypted, with the id of the key that sealed it.
CREATE TABLE oauth_records (
  key text PRIMARY KEY,
  format smallint NOT NULL,
  revision bigint NOT NULL,
  key_id text NOT NULL,
  iv bytea NOT NULL,
  auth_tag bytea NOT NULL,
  ciphertext bytea NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE TRIGGER oauth_records_revision BEFORE INSERT OR UPDATE ON oauth_records FOR EACH ROW EXECUTE FUNCTION store_next_revision();
CREATE TRIGGER oauth_records_changed AFTER INSERT OR UPDATE OR DELETE ON oauth_records FOR EACH ROW EXECUTE FUNCTION store_note_change();

-- 2025-era sessions are found by age when stale ones are swept.
CREATE INDEX sessions_updated_at ON sessions (updated_at);
