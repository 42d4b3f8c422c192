-- The table of the PostgreSQL rate-limit store, one row per bucket. ${table} is the table's
-- name (ratelimit_bucket unless configured) and ${index} the name of its index.
--   id          SHA-256 of the limit name, a 0 byte and the identity (UTF-8): 32 bytes
--   state       the bucket's state as ratelimit-core encodes it, or NULL before the first write
--   expires_at  database time, in microseconds since 1970, after which the state no longer
--               matters: it then reads as a fresh bucket, and removeExpired deletes the row
CREATE TABLE IF NOT EXISTS ${table} (
	id bytea PRIMARY KEY,
	state bytea,
	expires_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at);
