-- complete.sql for many tasks of one worker in one statement (the worker's
-- finished calls), with the same per-row rule: a requested cancel wins and
-- drops the result. Returns the ids it finished; a missing id's lease was lost.
-- $1 ids (text[]), $2 results (text[] of JSON text, null = no result), $3 worker_id.
update cairnq_tasks as task set
    status = case when task.cancel_requested_at_ms is not null then 'canceled' else 'succeeded' end,
    result = case when task.cancel_requested_at_ms is not null then task.result else item.result::jsonb end,
    progress = case when task.cancel_requested_at_ms is not null then task.progress else 1.0 end,
    lease_until_ms = null,
    completed_at_ms = clock.ms,
    updated_at_ms = clock.ms
from unnest($1::text[], $2::text[]) as item (id, result),
     (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = item.id and task.status = 'running' and task.worker_id = $3::text
  and task.lease_until_ms > clock.ms
returning task.id
