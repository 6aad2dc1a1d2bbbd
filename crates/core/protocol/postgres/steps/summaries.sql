-- A task's steps as the dashboard and the command line show them: the size
-- of each result in bytes, never the result itself; in the order stored.
-- $1 task_id.
select
    step.step_id, step.kind, octet_length(step.result), step.wake_at_ms, step.child_id,
    step.created_at_ms, child.status
from cairnq_steps as step
left join cairnq_tasks as child on child.id = step.child_id
where step.task_id = $1::text
order by step.created_at_ms, step.step_id
