-- Claim one name from one queue: walks cairnq_tasks_claim_name_idx in order.
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
      and name = :name
      and run_at_ms <= :now
    order by priority desc, run_at_ms asc, id asc
    limit :limit
)
returning *
