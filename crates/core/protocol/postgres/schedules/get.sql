-- One schedule. $1 name.
select * from cairnq_schedules where name = $1::text
