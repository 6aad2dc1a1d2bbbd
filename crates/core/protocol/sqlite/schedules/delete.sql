-- unschedule(). ?1 name.
delete from cairnq_schedules where name = ?1
returning *
