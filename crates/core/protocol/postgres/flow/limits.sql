-- The declared limits of one task name (null columns when it has none) and the
-- database clock, read once for the draw. $1 name.
select limits.rate_max, limits.rate_per_ms, limits.rate_per_group, limits.group_concurrency,
    limits.declared_by, limits.declared_at_ms, clock.ms
from (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) as clock
left join cairnq_flow_limits as limits on limits.name = $1::text
