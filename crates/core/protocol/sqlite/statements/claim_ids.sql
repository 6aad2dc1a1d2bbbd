-- Mark claimed the tasks of a JSON list of ids (:ids) a draw read queued in
-- this write transaction, as a claim does (docs/protocol.md, "Claim"):
-- :worker_id, :now, :lease_ms. Plain draws run it without the returning
-- clause, having read whole rows already; a flow chunk, which read ids only,
-- runs it as it is. The unary + keeps the planner off the status indexes:
-- with statistics from an empty table it would walk every queued row instead
-- of looking the few ids up by primary key.
update cairnq_tasks set
    status = 'running',
    worker_id = :worker_id,
    lease_until_ms = :now + :lease_ms,
    attempt = attempt + 1,
    updated_at_ms = :now
where id in (select value from json_each(:ids))
  and +status = 'queued'
returning *
