-- What counts against the groups $1 of a flow draw's chunk: per group, its
-- running rows of the name $2 when $3 (a group concurrency is declared; read
-- through the partial lease index), its starts after $5 in the budget $6 (a
-- key's when $7 = 1, else a task name's) when $4 (a per-group rate is
-- declared). Runs in a later statement than limits_and_locks, which locked
-- the groups, so the counts see what the locks' previous holders committed.
with running as (
    select coalesce(metadata->>'cairnq.group', '') as grp, count(*) as n
    from cairnq_tasks
    where status = 'running' and lease_until_ms is not null
      and name = $2::text
      and $3::boolean
      and coalesce(metadata->>'cairnq.group', '') = any($1::text[])
    group by 1
), started as (
    select grp, count(*) as n
    from cairnq_flow_starts
    where name = $6::text
      and shared_key = $7::bigint
      and $4::boolean
      and grp = any($1::text[])
      and started_at_ms > $5::bigint
    group by grp
)
select coalesce(running.grp, started.grp), coalesce(running.n, 0), coalesce(started.n, 0)
from running
full join started on started.grp = running.grp
