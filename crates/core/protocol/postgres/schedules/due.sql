-- The unfinished schedules of these queues (a finished one is past its end,
-- or fired its limit) whose pending occurrence has come,
-- earliest first, but those named in $4 (rows nobody can fire, passed over). $1
-- queues, $2 now, $3 limit.
select * from cairnq_schedules
where paused = 0 and next_run_at_ms <= $2::bigint and queue = any($1::text[])
    and name <> all($4::text[])
    and (end_at_ms is null or next_run_at_ms <= end_at_ms)
    and (run_limit is null or fired_count < run_limit)
order by next_run_at_ms, name
limit $3::bigint
