-- Raw success: a pending cancel does not matter here.
update cairnq_tasks set
    status = 'succeeded',
    result = :result,
    progress = 1.0,
    message = coalesce(:message, message),
    lease_until_ms = null,
    completed_at_ms = :now,
    updated_at_ms = :now
where id = :id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
