-- A queue-filtered purge: only finished rows enter, so claims never maintain it.
-- Statements repeat the status list literally so SQLite can prove the index applies.
create index if not exists cairnq_tasks_queue_completed_idx
    on cairnq_tasks (queue, completed_at_ms)
    where status in ('succeeded', 'failed', 'canceled');
update cairnq_meta set value = '9' where key = 'schema_version';
