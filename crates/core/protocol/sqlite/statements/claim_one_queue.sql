-- A claim's draw from one queue: equality lets the planner walk
-- cairnq_tasks_claim_idx in order. The rows it takes, whole; claim_ids.sql
-- then marks them claimed in the same write transaction.
select * from cairnq_tasks
where status = 'queued'
  and queue = :queue
  and (:names is null or name in (select value from json_each(:names)))
  and run_at_ms <= :now
order by priority desc, run_at_ms asc, id asc
limit :limit
