-- A worker's declaration of a rateLimit key's rate: the latest one wins for
-- every name drawing from the key. :key, :rate_max, :rate_per_ms,
-- :rate_per_group (0/1), :declared_by (the worker id), :now.
insert into cairnq_flow_keys (key, rate_max, rate_per_ms, rate_per_group, declared_by, declared_at_ms)
values (:key, :rate_max, :rate_per_ms, :rate_per_group, :declared_by, :now)
on conflict (key) do update set
    rate_max = excluded.rate_max,
    rate_per_ms = excluded.rate_per_ms,
    rate_per_group = excluded.rate_per_group,
    declared_by = excluded.declared_by,
    declared_at_ms = excluded.declared_at_ms
