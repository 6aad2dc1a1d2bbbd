-- The flow-control tables (docs/protocol.md, "Flow control tables"): created
-- by the first worker that declares a rate limit or a group concurrency, never
-- on a database without one, and recorded in the ledger as
-- `node_flow_0001.sql`, a name other SDKs' runners ignore.
create table if not exists cairnq_flow_limits (
    name text primary key,
    rate_max bigint,
    rate_per_ms bigint,
    rate_per_group integer not null default 0,
    group_concurrency bigint,
    declared_by text not null,
    declared_at_ms bigint not null
);
create table if not exists cairnq_flow_starts (
    name text not null,
    grp text not null,
    started_at_ms bigint not null
);
create index if not exists cairnq_flow_starts_window_idx
    on cairnq_flow_starts (name, grp, started_at_ms);
