-- Rate limits counted in the store, so that N replicas enforce one limit: a token bucket per key
-- (a principal, or a principal and a server), refilled from now() in SQL. One call of
-- limit_take counts one call against all of its keys, or against none.
CREATE TABLE limit_buckets (
  key text PRIMARY KEY,
  tokens double precision NOT NULL,
  per_minute double precision NOT NULL,
  at timestamptz NOT NULL
);

-- Each bucket of `bucket_keys` (limits in `calls_per_minute`) is refilled up to now() and
-- locked, keys in sorted order so concurrent calls never deadlock; an edited limit keeps what was
-- used of the old one. With `take_one`, when every bucket holds a call, one is taken from each.
-- Returns, per key in the given order, the ms until its bucket holds one call (0: it held one).
-- About one call in a thousand also drops buckets idle two minutes (full, so the same as none).
CREATE FUNCTION limit_take(bucket_keys text[], calls_per_minute double precision[], take_one boolean)
RETURNS double precision[] LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  level double precision;
  levels double precision[] := array_fill(0::double precision, ARRAY[cardinality(bucket_keys)]);
  every_one_has boolean := true;
BEGIN
  FOR i IN SELECT n FROM generate_subscripts(bucket_keys, 1) AS n ORDER BY bucket_keys[n] LOOP
    INSERT INTO limit_buckets AS b (key, tokens, per_minute, at) VALUES (bucket_keys[i], calls_per_minute[i], calls_per_minute[i], now())
    ON CONFLICT (key) DO UPDATE SET
      tokens = least(excluded.per_minute,
        b.tokens + excluded.per_minute - b.per_minute
          + greatest(0, extract(epoch FROM now() - b.at)) * excluded.per_minute / 60),
      per_minute = excluded.per_minute,
      at = greatest(b.at, now())
    RETURNING b.tokens INTO level;
    levels[i] := level;
    every_one_has := every_one_has AND level >= 1;
  END LOOP;
  IF take_one AND every_one_has THEN
    UPDATE limit_buckets SET tokens = tokens - 1 WHERE key = ANY (bucket_keys);
  END IF;
  IF random() < 0.001 THEN
    DELETE FROM limit_buckets WHERE key IN (
      SELECT key FROM limit_buckets WHERE at < now() - interval '2 minutes' FOR UPDATE SKIP LOCKED);
  END IF;
  RETURN ARRAY(
    SELECT CASE WHEN levels[n] >= 1 THEN 0 ELSE ceil((1 - levels[n]) * 60000 / calls_per_minute[n]) END
    FROM generate_subscripts(bucket_keys, 1) AS n ORDER BY n);
END $$;
