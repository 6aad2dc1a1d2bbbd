-- schedule(): insert, or update in place. An unchanged cron and zone keep the
-- pending occurrence, so an upsert never moves it (and never fires it twice);
-- paused, last run and creation time always stay.
-- ?1 name, ?2 task, ?3 cron, ?4 tz, ?5 queue, ?6 payload, ?7 metadata,
-- ?8 priority, ?9 max_attempts, ?10 catch_up, ?11 next_run_at_ms, ?12 now.
insert into cairnq_schedules (
    name, task_name, cron, tz, queue, payload, metadata, priority, max_attempts,
    catch_up, paused, next_run_at_ms, last_run_at_ms, created_at_ms, updated_at_ms
) values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, ?11, null, ?12, ?12)
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
        then cairnq_schedules.next_run_at_ms
        else excluded.next_run_at_ms
    end,
    cron = excluded.cron,
    tz = excluded.tz,
    updated_at_ms = excluded.updated_at_ms
returning *
