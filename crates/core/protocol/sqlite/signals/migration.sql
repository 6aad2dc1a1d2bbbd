-- The signals tables (docs/protocol.md, "Signals"): created by the first
-- signal sent or waited for, never on a database without one, and recorded
-- in the ledger as `node_signals_0001.sql`, a name other SDKs' runners
-- ignore. Both keys on cairnq_tasks(id) cascade, so every SDK's purge
-- deletes a task's signals and waits with it. A signal is kept once consumed
-- (consumed_at_ms set): the wait that consumed it replays its payload.
create table if not exists cairnq_signals (
    id integer primary key autoincrement,
    task_id text not null references cairnq_tasks(id) on delete cascade,
    name text not null,
    payload text,
    sent_at_ms integer not null,
    consumed_at_ms integer
);
create index if not exists cairnq_signals_task_idx
    on cairnq_signals (task_id, name, consumed_at_ms, id);
create table if not exists cairnq_signal_waits (
    task_id text not null references cairnq_tasks(id) on delete cascade,
    step_id text not null,
    name text not null,
    timeout_at_ms integer not null,
    outcome text not null check (outcome in ('waiting', 'signaled', 'timed_out')),
    signal_id integer,
    created_at_ms integer not null,
    primary key (task_id, step_id)
);
