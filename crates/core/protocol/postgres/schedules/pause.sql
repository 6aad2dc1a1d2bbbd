-- pauseSchedule(). $1 name, $2 now.
update cairnq_schedules set paused = 1, updated_at_ms = $2::bigint where name = $1::text
returning *
