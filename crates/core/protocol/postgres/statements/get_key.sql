-- $1 key.
select task_id from cairnq_task_keys where key = $1::text
