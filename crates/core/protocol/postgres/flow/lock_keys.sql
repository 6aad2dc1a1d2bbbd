-- Try the transaction-scoped advisory lock of each key; answers the keys taken.
-- Never waits: a key another claimer holds is left to it for this draw, so two
-- claimers never wait on each other whatever order they take keys in. The
-- seed keeps these keys apart from the keyed submits' (hashtextextended(key, 0)).
-- $1 keys (text[]).
select key from unnest($1::text[]) as key
where pg_try_advisory_xact_lock(hashtextextended(key, 1))
