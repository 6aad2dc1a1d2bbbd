-- Tasks suspended waiting on one of these (finished) children run now: a
-- parent waits queued with a run_at_ms in the future (its bounded re-check).
update cairnq_tasks set
    run_at_ms = :now,
    updated_at_ms = :now
where id in (
    select task_id from cairnq_steps
    where child_id in (select value from json_each(:child_ids))
)
  and status = 'queued' and run_at_ms > :now
