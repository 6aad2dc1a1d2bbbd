-- A debounced submit found its key's task still queued: the newest payload,
-- and a start `debounce_ms` from now, but never past `max_delay_ms` after the
-- task's creation (the burst's first submit).
update cairnq_tasks set
    payload = :payload,
    run_at_ms = min(:now + :debounce_ms, created_at_ms + :max_delay_ms),
    updated_at_ms = :now
where id = :id and status = 'queued'
