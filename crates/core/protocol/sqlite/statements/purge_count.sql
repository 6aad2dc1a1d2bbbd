-- How many rows `purge` would delete now, at most :limit (a purge preview):
-- purge.sql's candidate predicate, word for word (a test holds them equal),
-- counted on the index it walks instead of deleted.
select count(*) from (
    select 1 from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and completed_at_ms < :before_ms
      and (:queue is null or queue = :queue)
      and (:status is null or status = :status)
      and (:name is null or name = :name)
    limit :limit
)
