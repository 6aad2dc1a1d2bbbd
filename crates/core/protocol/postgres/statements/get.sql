-- $1 id.
select * from cairnq_tasks where id = $1::text
