-- Claim the tasks of a JSON list of ids a flow draw picked, those still
-- queued. :ids, :worker_id, :now, :lease_ms. The unary + keeps the planner
-- off the status indexes: with statistics from an empty table it would walk
-- every queued row instead of looking the few ids up by primary key.
update cairnq_tasks set
    status = 'running',
    worker_id = :worker_id,
    lease_until_ms = :now + :lease_ms,
    attempt = attempt + 1,
    updated_at_ms = :now
where id in (select value from json_each(:ids))
  and +status = 'queued'
returning *
