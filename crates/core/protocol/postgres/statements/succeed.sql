-- Raw success: a pending cancel does not matter here.
-- $1 id, $2 worker_id, $3 result (JSON text, null = no result), $4 message (null = unchanged).
update cairnq_tasks as task set
    status = 'succeeded',
    result = $3::text::jsonb,
    progress = 1.0,
    message = coalesce($4::text, task.message),
    lease_until_ms = null,
    completed_at_ms = clock.ms,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = $1::text and task.status = 'running' and task.worker_id = $2::text
  and task.lease_until_ms > clock.ms
returning task.*
