-- The unfinished tasks a task's child steps submitted, and theirs, at any
-- depth (a cancel reaches them; ctx.submit's children store no step and are
-- not among them).
-- $1 task_id.
with recursive tree(id) as (
    select child_id from cairnq_steps
    where task_id = $1::text and kind = 'child' and child_id is not null
    union
    select step.child_id from cairnq_steps as step
    join tree on step.task_id = tree.id
    where step.kind = 'child' and step.child_id is not null
)
select task.id from cairnq_tasks as task
join tree on tree.id = task.id
where task.status in ('queued', 'running')
