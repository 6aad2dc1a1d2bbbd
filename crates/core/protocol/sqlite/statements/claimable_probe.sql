-- Read-only: is a claim worth the write lock? Either claimable work on our queues
-- and names, or an expired lease anywhere (recovering it is everyone's job).
select exists (
    select 1 from cairnq_tasks
    where status = 'queued'
      and queue in (select value from json_each(:queues))
      and (:names is null or name in (select value from json_each(:names)))
      and run_at_ms <= :now
) or exists (
    select 1 from cairnq_tasks
    where status = 'running' and lease_until_ms is not null
      and lease_until_ms <= :now
)
