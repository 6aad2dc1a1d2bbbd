-- $1 key.
select task.* from cairnq_task_keys as pointer
join cairnq_tasks as task on task.id = pointer.task_id
where pointer.key = $1::text
