-- Every step a task has stored, each child step with its child's state (no
-- child row: the child was purged), for a run of the task to replay.
select
    step.step_id, step.kind, step.result, step.wake_at_ms, step.child_id, step.created_at_ms,
    child.status, child.result, child.error
from cairnq_steps as step
left join cairnq_tasks as child on child.id = step.child_id
where step.task_id = :task_id
