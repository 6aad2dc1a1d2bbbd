-- One beat for every task a worker holds: rows it no longer owns are simply
-- absent from the result. Only ids and the cancel flag travel back.
update cairnq_tasks set lease_until_ms = :now + :lease_ms, updated_at_ms = :now
where id in (select value from json_each(:ids))
  and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
returning id, cancel_requested_at_ms is not null
