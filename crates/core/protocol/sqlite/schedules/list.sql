-- Every schedule, by name.
select * from cairnq_schedules order by name
