-- The declared limits of one task name, if any: what every declaring worker
-- enforces (the latest declaration). :name.
select rate_max, rate_per_ms, rate_per_group, group_concurrency, declared_by, declared_at_ms
from cairnq_flow_limits
where name = :name
