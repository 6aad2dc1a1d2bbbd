-- The starts of a name after :since per group, for the groups of a JSON list
-- only ('' being the tasks without a group). :name, :since, :groups.
select grp, count(*)
from cairnq_flow_starts
where name = :name
  and grp in (select value from json_each(:groups))
  and started_at_ms > :since
group by grp
