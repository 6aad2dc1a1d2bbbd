-- The oldest unconsumed signal of this name, consumed by a task the caller
-- still holds (the ownership check of docs/protocol.md, "Terms").
-- $1 task_id, $2 worker_id, $3 name.
with clock as (
    select (extract(epoch from now()) * 1000)::bigint as ms
)
update cairnq_signals as signal set consumed_at_ms = clock.ms
from clock
where signal.id = (
    select id from cairnq_signals
    where task_id = $1::text and name = $3::text and consumed_at_ms is null
    order by id limit 1
)
  and exists (
    select 1 from cairnq_tasks as task
    where task.id = $1::text and task.status = 'running' and task.worker_id = $2::text
      and task.lease_until_ms > clock.ms
  )
returning signal.id, signal.payload
