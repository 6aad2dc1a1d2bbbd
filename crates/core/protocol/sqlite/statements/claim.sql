-- A claim's draw from the head of the queues (a JSON list), optionally for a
-- list of names: the rows it takes, whole, in claim order; claim_ids.sql then
-- marks them claimed in the same write transaction.
select * from cairnq_tasks
where status = 'queued'
  and queue in (select value from json_each(:queues))
  and (:names is null or name in (select value from json_each(:names)))
  and run_at_ms <= :now
order by priority desc, run_at_ms asc, id asc
limit :limit
