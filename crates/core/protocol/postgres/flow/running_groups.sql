-- The running tasks of a name per group ('' = no group), on every queue: the
-- protocol's own rows, so a finished, retried, canceled or lease-expired task
-- frees its slot with no state of ours to release. Both terms of the partial
-- lease index's predicate, so this reads the running rows and no others.
-- $1 name.
select coalesce(metadata->>'cairnq.group', '') as grp, count(*)
from cairnq_tasks
where status = 'running' and lease_until_ms is not null
  and name = $1::text
group by 1
