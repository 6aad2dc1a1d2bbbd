-- The running, unfinished schedule of these queues due first, but those named in ?2 (a
-- JSON array: rows nobody can fire). ?1 queues (a JSON array).
select * from cairnq_schedules
where paused = 0 and queue in (select value from json_each(?1))
    and name not in (select value from json_each(?2))
    and (end_at_ms is null or next_run_at_ms <= end_at_ms)
    and (run_limit is null or fired_count < run_limit)
order by next_run_at_ms
limit 1
