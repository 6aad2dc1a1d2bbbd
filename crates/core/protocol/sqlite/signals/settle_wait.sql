-- A wait step of a task the caller still holds: stored the first time with
-- its timeout (:timeout_ms past now), its outcome and signal set each time.
-- Answers the stored timeout; nothing for a lost lease.
insert into cairnq_signal_waits
    (task_id, step_id, name, timeout_at_ms, outcome, signal_id, created_at_ms)
select :task_id, :step_id, :name, :now + :timeout_ms, :outcome, :signal_id, :now
where exists (
    select 1 from cairnq_tasks
    where id = :task_id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
)
on conflict (task_id, step_id) do update set
    outcome = excluded.outcome,
    signal_id = excluded.signal_id
returning timeout_at_ms
