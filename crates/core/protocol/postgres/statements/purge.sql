-- The only delete: finished rows past the cutoff, oldest completion first. Key rows
-- cascade. Candidates are locked SKIP LOCKED so a concurrent retry is never deleted
-- out from under its new life.
-- $1 older_than_ms, $2 limit.
with doomed as (
    select id from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and completed_at_ms < (extract(epoch from now()) * 1000)::bigint - $1::bigint
    order by completed_at_ms
    limit $2::bigint
    for update skip locked
)
delete from cairnq_tasks as task
using doomed
where task.id = doomed.id
returning task.id
