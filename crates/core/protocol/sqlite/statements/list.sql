-- Newest first; id breaks ties within a millisecond so pages are stable.
select * from cairnq_tasks
where (:status is null or status = :status)
  and (:queue is null or queue = :queue)
  and (:name is null or name = :name)
  and (:root_id is null or root_id = :root_id)
  and (:correlation_id is null or correlation_id = :correlation_id)
order by created_at_ms desc, id desc
limit :limit offset :offset
