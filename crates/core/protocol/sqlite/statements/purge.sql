-- The only delete: finished rows past the cutoff, oldest completion first. Key rows
-- cascade. queue/status/name are optional equalities (null = off); the store
-- specializes the set ones so each shape reaches its index. The status list is
-- written exactly as cairnq_tasks_queue_completed_idx's predicate, so SQLite can
-- prove that partial index applies.
delete from cairnq_tasks
where id in (
    select id from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and completed_at_ms < :before_ms
      and (:queue is null or queue = :queue)
      and (:status is null or status = :status)
      and (:name is null or name = :name)
    order by completed_at_ms
    limit :limit
)
returning id
