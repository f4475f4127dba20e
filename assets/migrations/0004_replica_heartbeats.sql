-- One row per replica serving on this store, rewritten by its heartbeat (every 10 s) and deleted
-- when it stops: `loadout status --store` lists the replicas heard from in the last 30 s. The
-- times come from now() of the database, so replicas with skewed clocks still agree.
CREATE TABLE replica_heartbeats (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  version text NOT NULL,
  started_at timestamptz NOT NULL,
  last_heard timestamptz NOT NULL,
  sessions integer NOT NULL,
  listening boolean NOT NULL
);
