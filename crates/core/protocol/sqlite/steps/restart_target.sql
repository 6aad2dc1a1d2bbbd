-- A restart from a step (docs/api.md, "Restart from a step"): the task's
-- status and the stored-at time of step :step_id (null: no such step).
select task.status, step.created_at_ms
from cairnq_tasks as task
left join cairnq_steps as step on step.task_id = task.id and step.step_id = :step_id
where task.id = :task_id
