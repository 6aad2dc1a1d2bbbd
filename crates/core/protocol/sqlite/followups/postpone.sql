-- A debounced submit found its key's follow-up still held back: its start
-- moves as `debounce.sql` moves a queued task's, bounded by the follow-up's
-- creation (the burst's first submit).
update cairnq_followups set
    run_at_ms = min(
        :now + :debounce_ms,
        (select created_at_ms from cairnq_tasks where id = :id) + :max_delay_ms
    )
where task_id = :id
