-- The stored rate of one rateLimit key, if any: the latest declared. $1 key.
select rate_max, rate_per_ms, rate_per_group, declared_by, declared_at_ms
from cairnq_flow_keys
where key = $1::text
