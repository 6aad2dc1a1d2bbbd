-- Claim from one queue: equality lets the planner walk cairnq_tasks_claim_idx in order.
-- $1 queue (text), $2 names (text[], null = any name), $3 worker_id, $4 lease_ms, $5 limit.
-- The wall clock is read once, after recovery and any lock waits; rows other
-- claimers hold are skipped, so concurrent claimers never block or double-claim.
with clock as (
    select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
), picked as (
    select id from cairnq_tasks
    where status = 'queued'
      and queue = $1::text
      and ($2::text[] is null or name = any($2::text[]))
      and run_at_ms <= (select ms from clock)
    order by priority desc, run_at_ms asc, id asc
    limit $5::bigint
    for update skip locked
)
update cairnq_tasks as task set
    status = 'running',
    worker_id = $3::text,
    lease_until_ms = clock.ms + $4::bigint,
    attempt = task.attempt + 1,
    updated_at_ms = clock.ms
from picked, clock
where task.id = picked.id
returning task.*
