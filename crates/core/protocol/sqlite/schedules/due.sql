-- The schedules of these queues whose pending occurrence has come, earliest
-- first. ?1 queues (a JSON array), ?2 now, ?3 limit.
select * from cairnq_schedules
where paused = 0 and next_run_at_ms <= ?2
    and queue in (select value from json_each(?1))
order by next_run_at_ms, name
limit ?3
