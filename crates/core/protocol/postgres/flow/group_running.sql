-- Under a group concurrency, sent with limits_and_locks and run after it (a
-- later statement, so its counts see what the locks' previous holders
-- committed): the running rows of the name per group, every group that has
-- some (read through the partial lease index, which holds the running rows
-- alone; a group left out has none). Nothing when the name declares no group
-- concurrency. $1 name.
select coalesce(metadata->>'cairnq.group', '') as grp, count(*)
from cairnq_tasks
where status = 'running' and lease_until_ms is not null
  and name = $1::text
  and exists (
      select 1 from cairnq_flow_limits
      where name = $1::text and group_concurrency is not null
  )
group by 1
