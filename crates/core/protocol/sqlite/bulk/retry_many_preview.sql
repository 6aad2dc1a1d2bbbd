-- retryMany's dry run: the page retry_many.sql would change now, its candidate
-- predicate word for word (a test holds them equal), read instead of written.
select id from cairnq_tasks
    where status = :status
      and completed_at_ms is not null
      and (:queue is null or queue = :queue)
      and (:name is null or name = :name)
      and (:finished_after is null or completed_at_ms >= :finished_after)
      and (:finished_before is null or completed_at_ms < :finished_before)
    order by completed_at_ms
    limit :limit
