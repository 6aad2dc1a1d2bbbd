-- Try the transaction-scoped lock of a name-wide rate: its key is
-- `cairnq.flow:` and the JSON array [name] (limits_and_locks makes the groups'
-- keys alike); never waits: a name another claimer is starting is left to it
-- for this draw. $1 name.
select pg_try_advisory_xact_lock(hashtextextended('cairnq.flow:' || jsonb_build_array($1::text)::text, 1))
