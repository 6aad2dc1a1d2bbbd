-- Whether the task is a follow-up still held back.
select exists (select 1 from cairnq_followups where task_id = :id)
