-- The debounce follow-ups table (docs/protocol.md, "Debounced submit"):
-- created by the first follow-up, never on a database without one, and
-- recorded in the ledger as `node_followups_0001.sql`, a name other SDKs'
-- runners ignore. A row holds a follow-up task back (queued, its start far
-- ahead) until the task it follows has ended.
create table if not exists cairnq_followups (
    task_id text primary key references cairnq_tasks(id) on delete cascade,
    after_id text not null,
    run_at_ms bigint not null,
    created_at_ms bigint not null
);
