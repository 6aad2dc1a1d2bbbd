-- The events after a position, up to the head read just before, that pass
-- the filters, in commit order.
select
    0, seq, at_ms, task_id, queue, name, kind, attempt, worker_id, run_at_ms, progress, message,
    body, body_bytes
from cairnq_events
where seq > :after_minor and seq <= :head_minor
  and (:queue is null or queue = :queue)
  and (:name is null or name = :name)
  and (:task_id is null or task_id = :task_id)
order by seq
limit :limit
