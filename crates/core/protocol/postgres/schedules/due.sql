-- The schedules of these queues whose pending occurrence has come, earliest
-- first. $1 queues, $2 now, $3 limit.
select * from cairnq_schedules
where paused = 0 and next_run_at_ms <= $2::bigint and queue = any($1::text[])
order by next_run_at_ms, name
limit $3::bigint
