-- Rate limits shared by several task names (docs/protocol.md, "Flow control
-- tables"): each key's rate, the name's key, and a start's budget (a task
-- name's own, or a key's). Applied with the flow-control tables, under the
-- ledger name `node_flow_0002.sql`, which other SDKs' runners ignore.
create table if not exists cairnq_flow_keys (
    key text primary key,
    rate_max bigint not null,
    rate_per_ms bigint not null,
    rate_per_group integer not null default 0,
    declared_by text not null,
    declared_at_ms bigint not null
);
alter table cairnq_flow_limits add column if not exists rate_key text;
alter table cairnq_flow_starts add column if not exists shared_key integer not null default 0;
create index if not exists cairnq_flow_starts_budget_idx
    on cairnq_flow_starts (name, shared_key, grp, started_at_ms);
drop index if exists cairnq_flow_starts_window_idx;
