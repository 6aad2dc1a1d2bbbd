-- cancelMany (docs/api.md, "Bulk retry and cancel"): cancel.sql's change on one
-- page of live rows. A running row already asked to cancel is left out, so each
-- page changes every row it picks and the next call sees only the rest.
-- status/queue/name are optional (null = off), specialized when set; with a
-- queue the claim index's (queue, status) prefix is walked. The candidates are
-- cancel_many_preview.sql's.
update cairnq_tasks set
    status = case when status = 'queued' then 'canceled' else status end,
    cancel_requested_at_ms = case when status = 'running' then :now else cancel_requested_at_ms end,
    completed_at_ms = case when status = 'queued' then :now else completed_at_ms end,
    updated_at_ms = :now
where id in (
    select id from cairnq_tasks
    where status in ('queued', 'running')
      and (status = 'queued' or cancel_requested_at_ms is null)
      and (:status is null or status = :status)
      and (:queue is null or queue = :queue)
      and (:name is null or name = :name)
    limit :limit
)
returning id
