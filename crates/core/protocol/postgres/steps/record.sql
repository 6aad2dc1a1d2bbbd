-- A step of a task the caller still holds (the ownership check of
-- docs/protocol.md, "Terms"): nothing is stored for a lost lease. A sleep's
-- wake time is $6, or $7 ms past now.
-- $1 task_id, $2 worker_id, $3 step_id, $4 kind, $5 result (JSON text),
-- $6 wake_at_ms, $7 wake_after_ms, $8 child_id.
insert into cairnq_steps (task_id, step_id, kind, result, wake_at_ms, child_id, created_at_ms)
select
    $1::text, $3::text, $4::text, $5::text,
    case when $4::text = 'sleep' then coalesce($6::bigint, clock.ms + $7::bigint) end,
    $8::text, clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where exists (
    select 1 from cairnq_tasks as task
    where task.id = $1::text and task.status = 'running' and task.worker_id = $2::text
      and task.lease_until_ms > clock.ms
)
returning created_at_ms
