-- The running schedule of these queues due first. $1 queues.
select * from cairnq_schedules
where paused = 0 and queue = any($1::text[])
order by next_run_at_ms
limit 1
