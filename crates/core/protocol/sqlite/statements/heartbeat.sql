-- Extend a lease the caller still owns.
update cairnq_tasks set lease_until_ms = :now + :lease_ms, updated_at_ms = :now
where id = :id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
