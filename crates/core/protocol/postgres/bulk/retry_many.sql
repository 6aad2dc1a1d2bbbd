-- retryMany (docs/api.md, "Bulk retry and cancel"): retry.sql's change on one
-- page of finished rows of one status, oldest completion first. The status is
-- a range of one value and leads the order, so that only
-- cairnq_tasks_status_completed_idx gives that order: with `status = $1` the
-- planner drops it from the order and walks cairnq_tasks_completed_idx past
-- every other finished row (bench/history/2026-12-07-bulk.md). Candidates are
-- locked SKIP LOCKED (a row a purge or another retry holds is left to it) and
-- updated by the address of the version just locked, as purge.sql deletes.
-- queue/name and the completion bounds are optional (null = off), specialized
-- when set. The candidates are retry_many_preview.sql's.
-- $1 status, $2 queue, $3 name, $4 finished_after, $5 finished_before, $6 limit,
-- $7 reset_attempt.
update cairnq_tasks as task set
    status = 'queued',
    error = null,
    worker_id = null,
    lease_until_ms = null,
    cancel_requested_at_ms = null,
    completed_at_ms = null,
    progress = null,
    message = null,
    run_at_ms = clock.ms,
    attempt = case when $7::boolean then 0 else task.attempt end,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.ctid = any(array(
    select ctid from cairnq_tasks
    where status >= $1::text and status <= $1::text
      and completed_at_ms is not null
      and ($2::text is null or queue = $2::text)
      and ($3::text is null or name = $3::text)
      and ($4::bigint is null or completed_at_ms >= $4::bigint)
      and ($5::bigint is null or completed_at_ms < $5::bigint)
    order by status, completed_at_ms
    limit $6::bigint
    for update skip locked
))
returning task.id
