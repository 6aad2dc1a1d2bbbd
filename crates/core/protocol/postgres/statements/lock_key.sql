-- Serializes keyed operations on one key until the transaction ends. Other SDKs
-- take this exact lock, so the hash must stay hashtextextended(key, 0).
-- $1 key.
select pg_advisory_xact_lock(hashtextextended($1::text, 0))
