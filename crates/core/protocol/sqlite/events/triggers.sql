-- The update trigger's second form (docs/protocol.md, "Events"; ledger
-- `node_events_0002.sql`, after `node_events_0001.sql`): the same events,
-- one `insert ... values` per row. The first form computed the kind in a
-- derived table and inserted from it, which SQLite runs as a subquery of
-- its own for every row: about three times the cost of this insert.
-- Heartbeats set none of the trigger's columns, so they never run it. A
-- requeue from running tells its cause by the row alone: the recovery of
-- an expired lease runs where the lease had run out (every owner's write
-- needs it live), a suspension gives the attempt back, a retry keeps it.
drop trigger if exists cairnq_events_on_update;
create trigger cairnq_events_on_update
after update of status, progress, message, run_at_ms on cairnq_tasks
for each row
when new.status <> old.status or new.status = 'running' or new.run_at_ms <> old.run_at_ms
begin
    insert into cairnq_events
        (at_ms, task_id, queue, name, kind, attempt, worker_id, run_at_ms, progress, message, body, body_bytes)
    values (
        new.updated_at_ms, new.id, new.queue, new.name,
        case
            when new.status = 'running' and old.status = 'running' then
                case when new.cancel_requested_at_ms is old.cancel_requested_at_ms
                    then 'progress' else 'cancel_requested' end
            when new.status <> 'queued' then
                case when new.status = 'running' then 'started' else new.status end
            when old.status = 'running' and old.lease_until_ms <= new.updated_at_ms then 'lease_lost'
            when old.status = 'running' and new.attempt < old.attempt then 'suspended'
            when old.status = 'running' then 'retrying'
            when old.status = 'queued' and new.run_at_ms < old.run_at_ms then 'resumed'
            else 'queued'
        end,
        new.attempt, new.worker_id,
        -- Every requeue kind carries the run time: its new status is queued.
        case when new.status = 'queued' then new.run_at_ms end,
        case when new.status = 'running' and old.status = 'running'
            and new.cancel_requested_at_ms is old.cancel_requested_at_ms then new.progress end,
        case when new.status = 'running' and old.status = 'running'
            and new.cancel_requested_at_ms is old.cancel_requested_at_ms then new.message end,
        case
            when new.status = 'succeeded' then
                case when length(cast(new.result as blob)) <= 8192 then new.result end
            when new.status = 'failed' then new.error
            -- A retry: neither a lost lease nor a suspension.
            when new.status = 'queued' and old.status = 'running'
                and (old.lease_until_ms <= new.updated_at_ms) is not 1
                and new.attempt >= old.attempt then new.error
        end,
        case when new.status = 'succeeded' then length(cast(new.result as blob)) end
    );
end;
