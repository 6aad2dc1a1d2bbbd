-- ctx.retryAfter(ms, { limit: true }), under push_back_lock.sql's lock: fill
-- the window of the budget the task's name draws from (its own, or its
-- key's; under a per-group rate the task's group's) with `max` starts at
-- the database clock + $2 - perMs, so that it stays full until then + $2
-- and nothing drawing from it starts before. A name whose stored
-- declaration has no rate fills nothing. $1 task id.
with clock as (
    select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
), budget as (
    select coalesce(limits.rate_key, limits.name) as name,
        case when limits.rate_key is null then 0 else 1 end as shared_key,
        case when keys.key is null then limits.rate_max else keys.rate_max end as max,
        case when keys.key is null then limits.rate_per_ms else keys.rate_per_ms end as per_ms,
        case when (case when keys.key is null then limits.rate_per_group else keys.rate_per_group end) <> 0
            then coalesce(task.metadata->>'cairnq.group', '')
            else ''
        end as grp
    from cairnq_tasks as task
    join cairnq_flow_limits as limits on limits.name = task.name
    left join cairnq_flow_keys as keys on keys.key = limits.rate_key
    where task.id = $1::text and limits.rate_max is not null
)
insert into cairnq_flow_starts (name, shared_key, grp, started_at_ms)
select budget.name, budget.shared_key, budget.grp, clock.ms + $2::bigint - budget.per_ms
from budget, clock, generate_series(1, budget.max)
