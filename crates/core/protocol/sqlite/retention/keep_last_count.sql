-- How many rows keep_last.sql would delete now, at most :limit (a purge preview):
-- its candidate predicate word for word (a test holds them equal), counted.
select count(*) from (
    select 1 from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and (:queue is null or queue = :queue)
      and (:status is null or status = :status)
      and (:name is null or name = :name)
    order by completed_at_ms desc
    limit :limit offset :keep
)
