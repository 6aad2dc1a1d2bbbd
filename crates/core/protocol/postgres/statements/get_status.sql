-- The wait loop's probe: id and status only, by primary key.
-- $1 id.
select id, status from cairnq_tasks where id = $1::text
