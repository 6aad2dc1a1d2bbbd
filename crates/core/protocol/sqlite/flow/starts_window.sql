-- The starts of a name after :since, per group ('' = the name as a whole, or
-- the tasks without a group): how many, and the oldest. :name, :since.
select grp, count(*), min(started_at_ms)
from cairnq_flow_starts
where name = :name and started_at_ms > :since
group by grp
