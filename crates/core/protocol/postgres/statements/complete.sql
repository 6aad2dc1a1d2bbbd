-- Normal finish: a cancel requested while the handler ran wins and drops the result.
-- $1 id, $2 worker_id, $3 result (JSON text, null = no result).
update cairnq_tasks as task set
    status = case when task.cancel_requested_at_ms is not null then 'canceled' else 'succeeded' end,
    result = case when task.cancel_requested_at_ms is not null then task.result else $3::text::jsonb end,
    progress = case when task.cancel_requested_at_ms is not null then task.progress else 1.0 end,
    lease_until_ms = null,
    completed_at_ms = clock.ms,
    updated_at_ms = clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = $1::text and task.status = 'running' and task.worker_id = $2::text
  and task.lease_until_ms > clock.ms
returning task.*
