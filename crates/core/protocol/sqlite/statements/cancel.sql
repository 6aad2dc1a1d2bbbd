-- Queued tasks end at once; running ones get the cooperative flag and finish later.
update cairnq_tasks set
    status = case when status = 'queued' then 'canceled' else status end,
    cancel_requested_at_ms = case when status = 'running' then :now else cancel_requested_at_ms end,
    completed_at_ms = case when status = 'queued' then :now else completed_at_ms end,
    updated_at_ms = :now
where id = :id and status in ('queued', 'running')
