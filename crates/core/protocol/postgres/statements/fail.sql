-- Cancel wins; a retryable failure with attempts left re-queues after the delay;
-- anything else fails for good. The envelope is kept on every branch.
-- $1 id, $2 worker_id, $3 error (JSON text), $4 retryable (boolean), $5 delay_ms.
update cairnq_tasks as task set
    status = case
        when task.cancel_requested_at_ms is not null then 'canceled'
        when $4::boolean and task.attempt < task.max_attempts then 'queued'
        else 'failed'
    end,
    error = $3::text::jsonb,
    worker_id = case
        when task.cancel_requested_at_ms is null and $4::boolean and task.attempt < task.max_attempts then null
        else task.worker_id
    end,
    lease_until_ms = null,
    run_at_ms = case
        when task.cancel_requested_at_ms is null and $4::boolean and task.attempt < task.max_attempts then clock.ms + $5::bigint
        else task.run_at_ms
    end,
    completed_at_ms = case
        when task.cancel_requested_at_ms is null and $4::boolean and task.attempt < task.max_attempts then null
        else clock.ms
    end,
    progress = case
        when task.cancel_requested_at_ms is null and $4::boolean and task.attempt < task.max_attempts then null
        else task.progress
    end,
    message = case
        when task.cancel_requested_at_ms is null and $4::boolean and task.attempt < task.max_attempts then null
        else task.message
    end,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = $1::text and task.status = 'running' and task.worker_id = $2::text
  and task.lease_until_ms > clock.ms
returning task.*
