-- A new queued task; the caller supplies the id and the clock. No RETURNING:
-- the caller knows the row (NewTask::inserted_row), and RETURNING would cost
-- every insert in a shared transaction a statement journal.
insert into cairnq_tasks (
    id, name, queue, status, payload, metadata, max_attempts, priority,
    run_at_ms, parent_id, root_id, correlation_id, created_at_ms, updated_at_ms
) values (
    :id, :name, :queue, 'queued', :payload, :metadata, :max_attempts, :priority,
    :now + :delay_ms, :parent_id, :root_id, :correlation_id, :now, :now
)
