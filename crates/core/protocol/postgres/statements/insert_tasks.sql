-- insert_task.sql for many tasks in one statement (submitMany's plain
-- inserts): $1 is a JSON array of the tasks (their fields as NewTask names
-- them, payload and metadata as JSON text); the database stamps the clock.
-- No RETURNING: the caller knows each task's id and status.
insert into cairnq_tasks (
    id, name, queue, status, payload, metadata, max_attempts, priority,
    run_at_ms, parent_id, root_id, correlation_id, created_at_ms, updated_at_ms
)
select task.id, task.name, task.queue, 'queued', task.payload::jsonb, task.metadata::jsonb,
    task.max_attempts, task.priority, clock.ms + task.delay_ms, task.parent_id, task.root_id,
    task.correlation_id, clock.ms, clock.ms
from jsonb_to_recordset($1::text::jsonb) as task (
        id text, name text, queue text, payload text, metadata text, max_attempts bigint,
        priority bigint, delay_ms bigint, parent_id text, root_id text, correlation_id text
    ),
    (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) as clock
