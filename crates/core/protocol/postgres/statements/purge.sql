-- The only delete: finished rows past the cutoff, oldest completion first. Key rows
-- cascade. Candidates are locked SKIP LOCKED so a concurrent retry is never deleted
-- out from under its new life. queue/status/name are optional equalities (null = off),
-- specialized by the store when set; the status list matches the partial
-- cairnq_tasks_queue_completed_idx predicate. The rows go by the physical
-- address of the version just locked (a TID scan): joining back on id made the
-- planner hash the whole table for every batch.
-- $1 older_than_ms, $2 queue, $3 status, $4 name, $5 limit.
delete from cairnq_tasks as task
where task.ctid = any(array(
    select ctid from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and completed_at_ms < (extract(epoch from now()) * 1000)::bigint - $1::bigint
      and ($2::text is null or queue = $2::text)
      and ($3::text is null or status = $3::text)
      and ($4::text is null or name = $4::text)
    order by completed_at_ms
    limit $5::bigint
    for update skip locked
))
returning task.id
