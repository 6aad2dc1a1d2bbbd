-- The running schedule of these queues due first, but those named in ?2 (a
-- JSON array: rows nobody can fire). ?1 queues (a JSON array).
select * from cairnq_schedules
where paused = 0 and queue in (select value from json_each(?1))
    and name not in (select value from json_each(?2))
order by next_run_at_ms
limit 1
