-- The declared limits of one task name, if any: what every declaring worker
-- enforces (the latest declaration), and when its rate has a key, the key's
-- stored rate (the latest declared for the key). :name.
select limits.rate_max, limits.rate_per_ms, limits.rate_per_group, limits.group_concurrency,
    limits.declared_by, limits.declared_at_ms, limits.rate_key,
    keys.rate_max, keys.rate_per_ms, keys.rate_per_group, keys.declared_by, keys.declared_at_ms
from cairnq_flow_limits as limits
left join cairnq_flow_keys as keys on keys.key = limits.rate_key
where limits.name = :name
