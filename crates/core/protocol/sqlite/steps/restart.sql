-- Back to the queue from failed, canceled or succeeded, as retry does, the
-- result cleared too: the run replays the steps kept and runs the rest.
update cairnq_tasks set
    status = 'queued',
    result = null,
    error = null,
    worker_id = null,
    lease_until_ms = null,
    cancel_requested_at_ms = null,
    completed_at_ms = null,
    progress = null,
    message = null,
    run_at_ms = :now,
    attempt = case when :reset_attempt then 0 else attempt end,
    updated_at_ms = :now
where id = :id and status in ('failed', 'canceled', 'succeeded')
