-- A claim's draw of one name across a list of queues: the rows it takes,
-- whole; claim_ids.sql then marks them claimed in the same write transaction.
select * from cairnq_tasks
where status = 'queued'
  and queue in (select value from json_each(:queues))
  and name = :name
  and run_at_ms <= :now
order by priority desc, run_at_ms asc, id asc
limit :limit
