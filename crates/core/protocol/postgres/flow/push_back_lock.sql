-- ctx.retryAfter(ms, { limit: true }), before push_back.sql: wait for the
-- lock of the budget the task's name draws from (the name-wide key of
-- lock_name.sql, or under a per-group rate the task's group's key of
-- limits_and_locks.sql), so a draw that counted the window before the fill
-- has committed its starts, and every draw after sees the fill. $1 task id.
select pg_advisory_xact_lock(hashtextextended(
    case when limits.rate_key is null then 'cairnq.flow:' else 'cairnq.flow.key:' end
        || case when (case when keys.key is null then limits.rate_per_group else keys.rate_per_group end) <> 0
            then jsonb_build_array(coalesce(limits.rate_key, limits.name), coalesce(task.metadata->>'cairnq.group', ''))
            else jsonb_build_array(coalesce(limits.rate_key, limits.name))
        end::text,
    1))
from cairnq_tasks as task
join cairnq_flow_limits as limits on limits.name = task.name
left join cairnq_flow_keys as keys on keys.key = limits.rate_key
where task.id = $1::text and limits.rate_max is not null
