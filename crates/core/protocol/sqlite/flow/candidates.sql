-- The next due queued tasks of a name on one queue, in claim order, skipping
-- the groups in :excluded (a JSON list: full, or held by another claimer), and
-- starting after the cursor (:after_priority, :after_run_at, :after_id; all
-- null for the first chunk). Equality on queue, status and name walks
-- cairnq_tasks_claim_name_idx in order, so the walk stops at :limit.
select id,
    coalesce(cast(json_extract(metadata, '$."cairnq.group"') as text), '') as grp,
    priority,
    run_at_ms
from cairnq_tasks
where status = 'queued'
  and queue = :queue
  and name = :name
  and run_at_ms <= :now
  and coalesce(cast(json_extract(metadata, '$."cairnq.group"') as text), '')
      not in (select value from json_each(:excluded))
  and (:after_id is null
       or priority < :after_priority
       or (priority = :after_priority
           and (run_at_ms > :after_run_at or (run_at_ms = :after_run_at and id > :after_id))))
order by priority desc, run_at_ms asc, id asc
limit :limit
