-- The key's current task (so a replace moves it), id and status only; both primary keys.
-- $1 key.
select task.id, task.status from cairnq_task_keys as pointer
join cairnq_tasks as task on task.id = pointer.task_id
where pointer.key = $1::text
