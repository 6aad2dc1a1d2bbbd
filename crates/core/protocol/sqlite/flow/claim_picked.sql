-- Claim the picked tasks (a JSON list of ids) that are still queued, as the
-- claim statements do.
update cairnq_tasks set
    status = 'running',
    worker_id = :worker_id,
    lease_until_ms = :now + :lease_ms,
    attempt = attempt + 1,
    updated_at_ms = :now
where id in (select value from json_each(:ids))
  and status = 'queued'
returning *
