-- The starts of a budget after :since per group, for the groups of a JSON
-- list only ('' being the tasks without a group). :name, :shared_key,
-- :since, :groups.
select grp, count(*)
from cairnq_flow_starts
where name = :name
  and shared_key = :shared_key
  and grp in (select value from json_each(:groups))
  and started_at_ms > :since
group by grp
