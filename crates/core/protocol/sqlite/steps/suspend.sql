-- A held task goes back to the queue without using an attempt: queued to run
-- at :wake_at_ms (or :wake_after_ms past now), the attempt its claim counted
-- given back, so the claim that resumes it counts the same attempt again. The
-- lease and worker are cleared; progress and message stay, since the run goes
-- on after the wait. A requested cancel wins: the task ends canceled.
update cairnq_tasks set
    status = case when cancel_requested_at_ms is not null then 'canceled' else 'queued' end,
    attempt = case when cancel_requested_at_ms is not null then attempt else max(attempt - 1, 0) end,
    worker_id = case when cancel_requested_at_ms is not null then worker_id else null end,
    lease_until_ms = null,
    run_at_ms = case
        when cancel_requested_at_ms is not null then run_at_ms
        else coalesce(:wake_at_ms, :now + :wake_after_ms)
    end,
    completed_at_ms = case when cancel_requested_at_ms is not null then :now else null end,
    updated_at_ms = :now
where id = :id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
returning status
