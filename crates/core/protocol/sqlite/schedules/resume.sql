-- resumeSchedule(): a paused schedule starts again from its next occurrence
-- after now (what fell due while paused never fires); a running one is left
-- as it is. ?1 name, ?2 next occurrence after now, ?3 now.
update cairnq_schedules set
    next_run_at_ms = case when paused = 1 then ?2 else next_run_at_ms end,
    paused = 0,
    updated_at_ms = ?3
where name = ?1
returning *
