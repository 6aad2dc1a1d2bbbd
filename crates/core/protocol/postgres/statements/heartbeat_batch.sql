-- One beat for every task a worker holds: rows it no longer owns are simply
-- absent from the result. Only ids and the cancel flag travel back.
-- $1 ids (text[]), $2 worker_id, $3 lease_ms.
update cairnq_tasks as task set
    lease_until_ms = clock.ms + $3::bigint,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = any($1::text[]) and task.status = 'running' and task.worker_id = $2::text
  and task.lease_until_ms > clock.ms
returning task.id, task.cancel_requested_at_ms is not null
