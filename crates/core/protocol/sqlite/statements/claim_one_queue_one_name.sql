-- A claim's draw of one name from one queue: walks cairnq_tasks_claim_name_idx
-- in order. The rows it takes, whole; claim_ids.sql then marks them claimed in
-- the same write transaction.
select * from cairnq_tasks
where status = 'queued'
  and queue = :queue
  and name = :name
  and run_at_ms <= :now
order by priority desc, run_at_ms asc, id asc
limit :limit
