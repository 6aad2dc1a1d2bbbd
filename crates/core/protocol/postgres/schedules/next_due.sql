-- The running schedule of these queues due first, but those named in $2
-- (rows nobody can fire). $1 queues.
select * from cairnq_schedules
where paused = 0 and queue = any($1::text[]) and name <> all($2::text[])
order by next_run_at_ms
limit 1
