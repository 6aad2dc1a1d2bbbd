-- ctx.retryAfter(ms, { limit: true }): fill the window of the budget the
-- task's name draws from (its own, or its key's; under a per-group rate the
-- task's group's) with `max` starts at :now + :ms - perMs, so that it stays
-- full until :now + :ms and nothing drawing from it starts before. A name
-- whose stored declaration has no rate fills nothing. :id, :now, :ms.
with recursive budget as (
    select case when limits.rate_key is null then limits.name else limits.rate_key end as name,
        limits.rate_key is not null as shared_key,
        case when keys.key is null then limits.rate_max else keys.rate_max end as max,
        case when keys.key is null then limits.rate_per_ms else keys.rate_per_ms end as per_ms,
        case when (case when keys.key is null then limits.rate_per_group else keys.rate_per_group end) <> 0
            then coalesce(cast(json_extract(task.metadata, '$."cairnq.group"') as text), '')
            else ''
        end as grp
    from cairnq_tasks as task
    join cairnq_flow_limits as limits on limits.name = task.name
    left join cairnq_flow_keys as keys on keys.key = limits.rate_key
    where task.id = :id and limits.rate_max is not null
), filler(n) as (
    select 1 from budget
    union all
    select n + 1 from filler, budget where n < budget.max
)
insert into cairnq_flow_starts (name, shared_key, grp, started_at_ms)
select budget.name, budget.shared_key, budget.grp, :now + :ms - budget.per_ms
from budget, filler
