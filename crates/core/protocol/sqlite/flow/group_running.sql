-- The running rows of a name per group, for the groups of a JSON list only,
-- read through the partial lease index, which holds exactly the running
-- rows. :name, :groups.
select coalesce(cast(json_extract(metadata, '$."cairnq.group"') as text), '') as grp,
    count(*)
from cairnq_tasks indexed by cairnq_tasks_lease_idx
where status = 'running' and lease_until_ms is not null
  and name = :name
  and grp in (select value from json_each(:groups))
group by grp
