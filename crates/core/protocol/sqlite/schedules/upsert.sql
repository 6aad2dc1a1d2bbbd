-- schedule(): insert, or update in place. An unchanged recurrence (cron and
-- zone, or interval) and start keep the pending occurrence, so an upsert never
-- moves it (and never fires it twice); paused, last run, creation time and the
-- fired and skipped counts always stay.
-- ?1 name, ?2 task, ?3 cron ('' for an interval), ?4 tz, ?5 queue, ?6 payload,
-- ?7 metadata, ?8 priority, ?9 max_attempts, ?10 catch_up, ?11 next_run_at_ms,
-- ?12 now, ?13 overlap, ?14 every_ms, ?15 start_at_ms, ?16 end_at_ms,
-- ?17 run_limit.
insert into cairnq_schedules (
    name, task_name, cron, tz, queue, payload, metadata, priority, max_attempts,
    catch_up, paused, next_run_at_ms, last_run_at_ms, created_at_ms, updated_at_ms,
    overlap, every_ms, start_at_ms, end_at_ms, run_limit
) values (
    ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, ?11, null, ?12, ?12,
    ?13, ?14, ?15, ?16, ?17
)
on conflict (name) do update set
    task_name = excluded.task_name,
    queue = excluded.queue,
    payload = excluded.payload,
    metadata = excluded.metadata,
    priority = excluded.priority,
    max_attempts = excluded.max_attempts,
    catch_up = excluded.catch_up,
    next_run_at_ms = case
        when cairnq_schedules.cron = excluded.cron and cairnq_schedules.tz = excluded.tz
            and cairnq_schedules.every_ms is excluded.every_ms
            and cairnq_schedules.start_at_ms is excluded.start_at_ms
        then cairnq_schedules.next_run_at_ms
        else excluded.next_run_at_ms
    end,
    cron = excluded.cron,
    tz = excluded.tz,
    overlap = excluded.overlap,
    every_ms = excluded.every_ms,
    start_at_ms = excluded.start_at_ms,
    end_at_ms = excluded.end_at_ms,
    run_limit = excluded.run_limit,
    updated_at_ms = excluded.updated_at_ms
returning *
