-- Back to the queue from failed or canceled, with this attempt's traces cleared.
update cairnq_tasks set
    status = 'queued',
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
where id = :id and status in ('failed', 'canceled')
