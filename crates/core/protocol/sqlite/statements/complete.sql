-- Normal finish: a cancel requested while the handler ran wins and drops the result.
update cairnq_tasks set
    status = case when cancel_requested_at_ms is not null then 'canceled' else 'succeeded' end,
    result = case when cancel_requested_at_ms is not null then result else :result end,
    progress = case when cancel_requested_at_ms is not null then progress else 1.0 end,
    lease_until_ms = null,
    completed_at_ms = :now,
    updated_at_ms = :now
where id = :id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
