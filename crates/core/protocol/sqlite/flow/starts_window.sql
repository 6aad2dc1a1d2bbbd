-- The starts of a budget (a task name's own, or a key's: :shared_key) after
-- :since, per group ('' = the budget as a whole, or the tasks without a
-- group): how many, and the oldest. :name, :shared_key, :since.
select grp, count(*), min(started_at_ms)
from cairnq_flow_starts
where name = :name and shared_key = :shared_key and started_at_ms > :since
group by grp
