-- A worker's declaration of a rateLimit key's rate: the latest one wins for
-- every name drawing from the key. $1 key, $2 rate_max, $3 rate_per_ms,
-- $4 rate_per_group (0/1), $5 declared_by (the worker id).
insert into cairnq_flow_keys (key, rate_max, rate_per_ms, rate_per_group, declared_by, declared_at_ms)
values ($1::text, $2::bigint, $3::bigint, $4::bigint, $5::text, (extract(epoch from now()) * 1000)::bigint)
on conflict (key) do update set
    rate_max = excluded.rate_max,
    rate_per_ms = excluded.rate_per_ms,
    rate_per_group = excluded.rate_per_group,
    declared_by = excluded.declared_by,
    declared_at_ms = excluded.declared_at_ms
