-- Whether the task has recorded a step (it ran, and may be suspended). $1 id.
select exists (select 1 from cairnq_steps where task_id = $1::text)
