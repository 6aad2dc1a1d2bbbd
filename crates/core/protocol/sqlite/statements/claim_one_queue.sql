-- Claim from one queue: equality lets the planner walk cairnq_tasks_claim_idx in order.
update cairnq_tasks set
    status = 'running',
    worker_id = :worker_id,
    lease_until_ms = :now + :lease_ms,
    attempt = attempt + 1,
    updated_at_ms = :now
where id in (
    select id from cairnq_tasks
    where status = 'queued'
      and queue = :queue
      and (:names is null or name in (select value from json_each(:names)))
      and run_at_ms <= :now
    order by priority desc, run_at_ms asc, id asc
    limit :limit
)
returning *
