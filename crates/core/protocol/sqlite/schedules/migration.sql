-- The schedules table (docs/protocol.md, "Schedules"): created on first use,
-- never on a database that has no schedule, and recorded in the ledger as
-- `node_schedules_0001.sql`, a name other SDKs' runners ignore.
create table if not exists cairnq_schedules (
    name text primary key,
    task_name text not null,
    cron text not null,
    tz text not null,
    queue text not null,
    payload text not null,
    metadata text not null,
    priority integer not null,
    max_attempts integer not null,
    catch_up text not null,
    paused integer not null default 0,
    next_run_at_ms integer not null,
    last_run_at_ms integer,
    created_at_ms integer not null,
    updated_at_ms integer not null
);
create index if not exists cairnq_schedules_due_idx
    on cairnq_schedules (paused, next_run_at_ms);
