-- The running tasks of a name per group ('' = no group), on every queue: the
-- protocol's own rows, so a finished, retried, canceled or lease-expired task
-- frees its slot with no state of ours to release. The partial lease index
-- holds exactly the running rows, so this reads those and no others.
select coalesce(cast(json_extract(metadata, '$."cairnq.group"') as text), '') as grp, count(*)
from cairnq_tasks indexed by cairnq_tasks_lease_idx
where status = 'running' and lease_until_ms is not null
  and name = :name
group by grp
