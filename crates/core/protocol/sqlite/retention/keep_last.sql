-- Retention by count (docs/api.md, "Retention"): the finished rows a rule matches
-- past its :keep most recently completed, :limit at a time from the newest of
-- them. Key rows cascade. queue/status/name are optional equalities (null = off),
-- specialized when set, so each shape walks purge.sql's index backwards; the
-- status list is that partial index's predicate.
delete from cairnq_tasks
where id in (
    select id from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and (:queue is null or queue = :queue)
      and (:status is null or status = :status)
      and (:name is null or name = :name)
    order by completed_at_ms desc
    limit :limit offset :keep
)
returning id
