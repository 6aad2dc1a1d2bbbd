-- cancelMany (docs/api.md, "Bulk retry and cancel"): cancel.sql's change on one
-- page of live rows, locked SKIP LOCKED (a row a worker is writing now is left
-- for the next call) and updated by the address of the version just locked. A
-- running row already asked to cancel is left out, so each page changes every
-- row it picks. status/queue/name are optional (null = off), specialized when
-- set. The candidates are cancel_many_preview.sql's.
-- $1 status, $2 queue, $3 name, $4 limit.
update cairnq_tasks as task set
    status = case when task.status = 'queued' then 'canceled' else task.status end,
    cancel_requested_at_ms = case when task.status = 'running' then clock.ms else task.cancel_requested_at_ms end,
    completed_at_ms = case when task.status = 'queued' then clock.ms else task.completed_at_ms end,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.ctid = any(array(
    select ctid from cairnq_tasks
    where status in ('queued', 'running')
      and (status = 'queued' or cancel_requested_at_ms is null)
      and ($1::text is null or status = $1::text)
      and ($2::text is null or queue = $2::text)
      and ($3::text is null or name = $3::text)
    limit $4::bigint
    for update skip locked
))
returning task.id
