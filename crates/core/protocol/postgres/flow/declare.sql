-- A worker's declaration of a name's limits: the latest one wins.
-- $1 name, $2 rate_max, $3 rate_per_ms, $4 rate_per_group (0/1),
-- $5 group_concurrency, $6 declared_by (the worker id), $7 rate_key (null:
-- the rate is the name's own).
insert into cairnq_flow_limits (
    name, rate_max, rate_per_ms, rate_per_group, group_concurrency, declared_by, declared_at_ms,
    rate_key
) values (
    $1::text, $2::bigint, $3::bigint, $4::bigint, $5::bigint, $6::text,
    (extract(epoch from now()) * 1000)::bigint, $7::text
)
on conflict (name) do update set
    rate_max = excluded.rate_max,
    rate_per_ms = excluded.rate_per_ms,
    rate_per_group = excluded.rate_per_group,
    group_concurrency = excluded.group_concurrency,
    declared_by = excluded.declared_by,
    declared_at_ms = excluded.declared_at_ms,
    rate_key = excluded.rate_key
