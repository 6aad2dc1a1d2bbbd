-- A restart from a step (docs/api.md, "Restart from a step"): the task's
-- status and the stored-at time of step $2 (null: no such step), the task's
-- row locked so that no retry requeues it under the restart.
-- $1 task_id, $2 step_id.
select task.status, step.created_at_ms
from cairnq_tasks as task
left join cairnq_steps as step on step.task_id = task.id and step.step_id = $2::text
where task.id = $1::text
for update of task
