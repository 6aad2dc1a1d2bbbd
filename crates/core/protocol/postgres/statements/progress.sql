-- Null leaves a field as it is: progress can set but never clear.
-- $1 id, $2 worker_id, $3 progress (double precision), $4 message.
update cairnq_tasks as task set
    progress = coalesce($3::double precision, task.progress),
    message = coalesce($4::text, task.message),
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = $1::text and task.status = 'running' and task.worker_id = $2::text
  and task.lease_until_ms > clock.ms
returning task.*
