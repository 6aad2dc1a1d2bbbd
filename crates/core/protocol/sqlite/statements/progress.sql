-- Null leaves a field as it is: progress can set but never clear.
update cairnq_tasks set
    progress = coalesce(:progress, progress),
    message = coalesce(:message, message),
    updated_at_ms = :now
where id = :id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
