-- A debounced submit found its key's follow-up still held back: its start
-- moves as `debounce.sql` moves a queued task's, bounded by the follow-up's
-- creation (the burst's first submit).
-- $1 id, $2 debounce_ms, $3 max_delay_ms.
update cairnq_followups as held set
    run_at_ms = least(clock.ms + $2::bigint, task.created_at_ms + $3::bigint)
from cairnq_tasks as task,
    (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) as clock
where held.task_id = $1::text and task.id = held.task_id
