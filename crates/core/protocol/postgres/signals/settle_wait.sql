-- A wait step of a task the caller still holds: stored the first time with
-- its timeout ($4 ms past now), its outcome and signal set each time.
-- Answers the stored timeout; nothing for a lost lease.
-- $1 task_id, $2 worker_id, $3 step_id, $4 timeout_ms, $5 name, $6 outcome,
-- $7 signal_id.
insert into cairnq_signal_waits
    (task_id, step_id, name, timeout_at_ms, outcome, signal_id, created_at_ms)
select $1::text, $3::text, $5::text, clock.ms + $4::bigint, $6::text, $7::bigint, clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where exists (
    select 1 from cairnq_tasks as task
    where task.id = $1::text and task.status = 'running' and task.worker_id = $2::text
      and task.lease_until_ms > clock.ms
)
on conflict (task_id, step_id) do update set
    outcome = excluded.outcome,
    signal_id = excluded.signal_id
returning timeout_at_ms
