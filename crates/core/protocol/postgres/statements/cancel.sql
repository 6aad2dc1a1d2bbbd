-- Queued tasks end at once; running ones get the cooperative flag and finish later.
-- $1 id.
update cairnq_tasks as task set
    status = case when task.status = 'queued' then 'canceled' else task.status end,
    cancel_requested_at_ms = case when task.status = 'running' then clock.ms else task.cancel_requested_at_ms end,
    completed_at_ms = case when task.status = 'queued' then clock.ms else task.completed_at_ms end,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = $1::text and task.status in ('queued', 'running')
returning task.*
