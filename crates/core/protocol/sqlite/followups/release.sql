-- Follow-ups whose task has ended (or is gone) become due: at their start,
-- or now if it has passed. `forget.sql` then drops their rows.
update cairnq_tasks set
    run_at_ms = max(held.run_at_ms, :now),
    updated_at_ms = :now
from cairnq_followups as held
where cairnq_tasks.id = held.task_id
  and cairnq_tasks.status = 'queued'
  and not exists (
      select 1 from cairnq_tasks as followed
      where followed.id = held.after_id and followed.status in ('queued', 'running')
  )
