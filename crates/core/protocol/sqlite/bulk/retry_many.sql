-- retryMany (docs/api.md, "Bulk retry and cancel"): retry.sql's change on one page
-- of finished rows of one status (failed or canceled, as the core checks), oldest
-- completion first, walking cairnq_tasks_status_completed_idx: purge.sql's list of
-- terminal statuses beside the equality would make SQLite walk every finished row
-- in completion order instead. queue/name and the completion bounds are optional
-- (null = off), specialized when set. The candidates are retry_many_preview.sql's.
update cairnq_tasks set
    status = 'queued',
    error = null,
    worker_id = null,
    lease_until_ms = null,
    cancel_requested_at_ms = null,
    completed_at_ms = null,
    progress = null,
    message = null,
    run_at_ms = :now,
    attempt = case when :reset_attempt then 0 else attempt end,
    updated_at_ms = :now
where id in (
    select id from cairnq_tasks
    where status = :status
      and completed_at_ms is not null
      and (:queue is null or queue = :queue)
      and (:name is null or name = :name)
      and (:finished_after is null or completed_at_ms >= :finished_after)
      and (:finished_before is null or completed_at_ms < :finished_before)
    order by completed_at_ms
    limit :limit
)
returning id
