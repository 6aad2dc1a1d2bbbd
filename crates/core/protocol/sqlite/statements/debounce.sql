-- A debounced submit found its key's task queued and never started: the
-- newest payload, and a start `debounce_ms` from now, but never past
-- `max_delay_ms` after the task's creation (the burst's first submit). A
-- follow-up still held back (`held`) keeps its start (its row in
-- `cairnq_followups` holds the one it will get).
update cairnq_tasks set
    payload = :payload,
    run_at_ms = case
        when :held then run_at_ms
        else min(:now + :debounce_ms, created_at_ms + :max_delay_ms)
    end,
    updated_at_ms = :now
where id = :id and status = 'queued'
