-- The running schedule of these queues due first. ?1 queues (a JSON array).
select * from cairnq_schedules
where paused = 0 and queue in (select value from json_each(?1))
order by next_run_at_ms
limit 1
