-- A debounced submit found its key's task queued and never started: the
-- newest payload, and a start `debounce_ms` from now, but never past
-- `max_delay_ms` after the task's creation (the burst's first submit). A
-- follow-up still held back ($5) keeps its start (its row in
-- `cairnq_followups` holds the one it will get). A claim that took the row
-- meanwhile makes this match nothing (the status is re-checked under the row
-- lock), and the caller makes a follow-up instead.
-- $1 id, $2 payload (JSON text), $3 debounce_ms, $4 max_delay_ms, $5 held.
-- clock_timestamp(), as insert_task: the submit may have waited on the key lock.
update cairnq_tasks as task set
    payload = $2::text::jsonb,
    run_at_ms = case
        when $5::boolean then task.run_at_ms
        else least(clock.ms + $3::bigint, task.created_at_ms + $4::bigint)
    end,
    updated_at_ms = clock.ms
from (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) as clock
where task.id = $1::text and task.status = 'queued'
returning task.*
