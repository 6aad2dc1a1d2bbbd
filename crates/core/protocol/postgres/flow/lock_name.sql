-- Try the transaction-scoped lock of a budget under a name-wide rate: its key
-- is `cairnq.flow:` (a task name's own budget) or `cairnq.flow.key:` (a
-- rateLimit key's, $2 = 1) and the JSON array [budget] (limits_and_locks
-- makes the groups' keys alike); never waits: a budget another claimer is
-- starting tasks of is left to it for this draw. $1 budget.
select pg_try_advisory_xact_lock(hashtextextended(
    case when $2::bigint = 0 then 'cairnq.flow:' else 'cairnq.flow.key:' end
        || jsonb_build_array($1::text)::text,
    1))
