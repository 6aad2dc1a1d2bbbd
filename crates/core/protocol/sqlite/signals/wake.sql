-- The task waiting (suspended, queued until its timeout) for a signal of
-- this name runs now: the wake a child's completion gives its parent.
update cairnq_tasks set
    run_at_ms = :now,
    updated_at_ms = :now
where id = :task_id and status = 'queued' and run_at_ms > :now
  and exists (
    select 1 from cairnq_signal_waits
    where task_id = :task_id and name = :name and outcome = 'waiting'
  )
