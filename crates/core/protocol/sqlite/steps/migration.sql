-- The durable steps table (docs/protocol.md, "Durable steps"): created on
-- first use, never on a database whose tasks never ran a step, and recorded in
-- the ledger as `node_steps_0001.sql`, a name other SDKs' runners ignore. Its
-- key on cairnq_tasks(id) cascades, as cairnq_task_keys' does, so every SDK's
-- purge deletes a task's steps with it (each SDK turns foreign_keys on).
create table if not exists cairnq_steps (
    task_id text not null references cairnq_tasks(id) on delete cascade,
    step_id text not null,
    kind text not null check (kind in ('step', 'sleep', 'child')),
    result text,
    wake_at_ms integer,
    child_id text,
    created_at_ms integer not null,
    primary key (task_id, step_id)
);
create index if not exists cairnq_steps_child_idx
    on cairnq_steps (child_id);
