-- Newest first; id breaks ties within a millisecond so pages are stable. The
-- page is chosen on rowids and sort keys alone, then only its rows are read
-- whole: sorting whole rows (payloads and all) only to skip most of them, as a
-- deep offset does, costs several times more.
select task.* from (
    select rowid as task_rowid from cairnq_tasks
    where (:status is null or status = :status)
      and (:queue is null or queue = :queue)
      and (:name is null or name = :name)
      and (:root_id is null or root_id = :root_id)
      and (:correlation_id is null or correlation_id = :correlation_id)
    order by created_at_ms desc, id desc
    limit :limit offset :offset
) as page
cross join cairnq_tasks as task on task.rowid = page.task_rowid
order by task.created_at_ms desc, task.id desc
