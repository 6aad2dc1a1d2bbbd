-- Expired leases: cancel wins, attempts left re-queue, otherwise the task fails
-- with the protocol's lease-expiry envelope.
update cairnq_tasks set
    status = case
        when cancel_requested_at_ms is not null then 'canceled'
        when attempt < max_attempts then 'queued'
        else 'failed'
    end,
    worker_id = case
        when cancel_requested_at_ms is null and attempt < max_attempts then null
        else worker_id
    end,
    lease_until_ms = null,
    run_at_ms = case
        when cancel_requested_at_ms is null and attempt < max_attempts then :now
        else run_at_ms
    end,
    error = case
        when cancel_requested_at_ms is null and attempt >= max_attempts
            then '{"type":"LeaseExpired","code":"lease_expired","message":"task lease expired and max attempts reached","retryable":false,"details":{}}'
        else error
    end,
    completed_at_ms = case
        when cancel_requested_at_ms is null and attempt < max_attempts then completed_at_ms
        else :now
    end,
    progress = case
        when cancel_requested_at_ms is null and attempt < max_attempts then null
        else progress
    end,
    message = case
        when cancel_requested_at_ms is null and attempt < max_attempts then null
        else message
    end,
    updated_at_ms = :now
where status = 'running' and lease_until_ms is not null
  and lease_until_ms <= :now
returning id
