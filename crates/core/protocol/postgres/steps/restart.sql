-- Back to the queue from failed, canceled or succeeded, as retry does, the
-- result cleared too: the run replays the steps kept and runs the rest.
-- $1 id, $2 reset_attempt (boolean).
update cairnq_tasks as task set
    status = 'queued',
    result = null,
    error = null,
    worker_id = null,
    lease_until_ms = null,
    cancel_requested_at_ms = null,
    completed_at_ms = null,
    progress = null,
    message = null,
    run_at_ms = clock.ms,
    attempt = case when $2::boolean then 0 else task.attempt end,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = $1::text and task.status in ('failed', 'canceled', 'succeeded')
returning task.*
