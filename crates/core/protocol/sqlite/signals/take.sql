-- The oldest unconsumed signal of this name, consumed by a task the caller
-- still holds (the ownership check of docs/protocol.md, "Terms").
update cairnq_signals set consumed_at_ms = :now
where id = (
    select id from cairnq_signals
    where task_id = :task_id and name = :name and consumed_at_ms is null
    order by id limit 1
)
  and exists (
    select 1 from cairnq_tasks
    where id = :task_id and status = 'running' and worker_id = :worker_id and lease_until_ms > :now
  )
returning id, payload
