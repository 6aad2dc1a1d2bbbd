-- Whether the task has recorded a step (it ran, and may be suspended).
select exists (select 1 from cairnq_steps where task_id = :id)
