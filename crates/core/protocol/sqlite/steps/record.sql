-- A step of a task the caller still holds (the ownership check of
-- docs/protocol.md, "Terms"): nothing is stored for a lost lease. A sleep's
-- wake time is :wake_at_ms, or :wake_after_ms past now.
insert into cairnq_steps (task_id, step_id, kind, result, wake_at_ms, child_id, created_at_ms)
select
    :task_id, :step_id, :kind, :result,
    case when :kind = 'sleep' then coalesce(:wake_at_ms, :now + :wake_after_ms) end,
    :child_id, :now
where exists (
    select 1 from cairnq_tasks
    where id = :task_id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
)
returning created_at_ms
