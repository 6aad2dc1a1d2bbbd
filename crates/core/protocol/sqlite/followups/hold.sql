-- Hold a new follow-up back until the task it follows has ended; then it
-- starts `debounce_ms` after this submit, or at once if that has passed.
insert into cairnq_followups (task_id, after_id, run_at_ms, created_at_ms)
values (:task_id, :after_id, :now + :debounce_ms, :now)
