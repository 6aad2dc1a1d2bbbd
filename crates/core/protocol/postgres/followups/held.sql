-- Whether the task is a follow-up still held back. $1 id.
select exists (select 1 from cairnq_followups where task_id = $1::text)
