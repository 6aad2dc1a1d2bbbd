-- A held task goes back to the queue without using an attempt: queued to run
-- at $3 (or $4 ms past now), the attempt its claim counted given back, so the
-- claim that resumes it counts the same attempt again. The lease and worker
-- are cleared; progress and message stay, since the run goes on after the
-- wait. A requested cancel wins: the task ends canceled.
-- $1 id, $2 worker_id, $3 wake_at_ms, $4 wake_after_ms.
update cairnq_tasks as task set
    status = case when task.cancel_requested_at_ms is not null then 'canceled' else 'queued' end,
    attempt = case
        when task.cancel_requested_at_ms is not null then task.attempt
        else greatest(task.attempt - 1, 0)
    end,
    worker_id = case when task.cancel_requested_at_ms is not null then task.worker_id else null end,
    lease_until_ms = null,
    run_at_ms = case
        when task.cancel_requested_at_ms is not null then task.run_at_ms
        else coalesce($3::bigint, clock.ms + $4::bigint)
    end,
    completed_at_ms = case when task.cancel_requested_at_ms is not null then clock.ms else null end,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = $1::text and task.status = 'running' and task.worker_id = $2::text
  and task.lease_until_ms > clock.ms
returning task.status
