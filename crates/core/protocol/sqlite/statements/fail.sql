-- Cancel wins; a retryable failure with attempts left re-queues after the delay;
-- anything else fails for good. The envelope is kept on every branch.
update cairnq_tasks set
    status = case
        when cancel_requested_at_ms is not null then 'canceled'
        when :retryable and attempt < max_attempts then 'queued'
        else 'failed'
    end,
    error = :error,
    worker_id = case
        when cancel_requested_at_ms is null and :retryable and attempt < max_attempts then null
        else worker_id
    end,
    lease_until_ms = null,
    run_at_ms = case
        when cancel_requested_at_ms is null and :retryable and attempt < max_attempts then :now + :delay_ms
        else run_at_ms
    end,
    completed_at_ms = case
        when cancel_requested_at_ms is null and :retryable and attempt < max_attempts then null
        else :now
    end,
    progress = case
        when cancel_requested_at_ms is null and :retryable and attempt < max_attempts then null
        else progress
    end,
    message = case
        when cancel_requested_at_ms is null and :retryable and attempt < max_attempts then null
        else message
    end,
    updated_at_ms = :now
where id = :id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
