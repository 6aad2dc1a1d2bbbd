-- insert_task.sql for many tasks in one statement (submitMany's plain
-- inserts): :tasks is a JSON array of the tasks (their fields as NewTask
-- names them, payload and metadata as JSON text), :now the clock. Rows are
-- inserted in array order. No RETURNING, as insert_task.sql.
insert into cairnq_tasks (
    id, name, queue, status, payload, metadata, max_attempts, priority,
    run_at_ms, parent_id, root_id, correlation_id, created_at_ms, updated_at_ms
)
select value ->> 'id', value ->> 'name', value ->> 'queue', 'queued',
    value ->> 'payload', value ->> 'metadata', value ->> 'max_attempts', value ->> 'priority',
    :now + (value ->> 'delay_ms'), value ->> 'parent_id', value ->> 'root_id',
    value ->> 'correlation_id', :now, :now
from json_each(:tasks)
