-- The queue pauses table (docs/protocol.md, "Queue pauses"): created by the
-- first pauseQueue, never on a database without one, and recorded in the
-- ledger as `node_pauses_0001.sql`, a name other SDKs' runners ignore. A row
-- per paused queue, deleted by its resume; the primary key is the one index
-- the workers' periodic read uses. Any queue name may be paused, one with no
-- task yet included.
create table if not exists cairnq_queue_pauses (
    queue text primary key,
    paused_at_ms integer not null
);
