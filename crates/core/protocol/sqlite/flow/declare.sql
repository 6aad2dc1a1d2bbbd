-- A worker's declaration of a name's limits: the latest one wins.
-- :name, :rate_max, :rate_per_ms, :rate_per_group (0/1), :group_concurrency,
-- :rate_key (null: the rate is the name's own), :declared_by (the worker
-- id), :now.
insert into cairnq_flow_limits (
    name, rate_max, rate_per_ms, rate_per_group, group_concurrency, rate_key, declared_by,
    declared_at_ms
) values (
    :name, :rate_max, :rate_per_ms, :rate_per_group, :group_concurrency, :rate_key, :declared_by,
    :now
)
on conflict (name) do update set
    rate_max = excluded.rate_max,
    rate_per_ms = excluded.rate_per_ms,
    rate_per_group = excluded.rate_per_group,
    group_concurrency = excluded.group_concurrency,
    rate_key = excluded.rate_key,
    declared_by = excluded.declared_by,
    declared_at_ms = excluded.declared_at_ms
