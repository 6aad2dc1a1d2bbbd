-- cancelMany's dry run: the page cancel_many.sql would change now, its candidate
-- predicate word for word (a test holds them equal), read instead of written.
select id from cairnq_tasks
    where status in ('queued', 'running')
      and (status = 'queued' or cancel_requested_at_ms is null)
      and (:status is null or status = :status)
      and (:queue is null or queue = :queue)
      and (:name is null or name = :name)
    limit :limit
