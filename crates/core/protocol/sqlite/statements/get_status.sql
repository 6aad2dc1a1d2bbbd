-- The wait loop's probe: id and status only, by primary key.
select id, status from cairnq_tasks where id = :id
