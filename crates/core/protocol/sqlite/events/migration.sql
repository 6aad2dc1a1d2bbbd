-- Task events (docs/protocol.md, "Events"): created by the first subscription,
-- never on a database nobody subscribes on, and recorded in the ledger as
-- `node_events_0001.sql`, a name other SDKs' runners ignore. The triggers live
-- in the database, so every writer's change (any SDK's, any process's) is
-- recorded in the transaction that makes it: an event exists exactly when its
-- change committed, in commit order (seq). The protocol's table, indexes and
-- statements stay as they are; the triggers only add rows here.
create table if not exists cairnq_events (
    seq integer primary key,
    at_ms integer not null,
    task_id text not null,
    queue text not null,
    name text not null,
    kind text not null,
    attempt integer not null,
    worker_id text,
    run_at_ms integer,
    progress real,
    message text,
    body text,
    body_bytes integer
);
-- The last position retention deleted: a listener behind it missed events.
create table if not exists cairnq_events_horizon (
    id integer primary key check (id = 1),
    major integer not null,
    minor integer not null
);
create trigger if not exists cairnq_events_on_insert
after insert on cairnq_tasks
for each row
begin
    insert into cairnq_events (at_ms, task_id, queue, name, kind, attempt, run_at_ms)
    values (new.updated_at_ms, new.id, new.queue, new.name, new.status, new.attempt, new.run_at_ms);
end;
-- Heartbeats set none of these columns, so they never run the trigger. A
-- requeue from running tells its cause by the row alone: the recovery of an
-- expired lease runs where the lease had run out (every owner's write needs
-- it live), a suspension gives the attempt back, a retry keeps it.
create trigger if not exists cairnq_events_on_update
after update of status, progress, message, run_at_ms on cairnq_tasks
for each row
when new.status <> old.status or new.status = 'running' or new.run_at_ms <> old.run_at_ms
begin
    insert into cairnq_events
        (at_ms, task_id, queue, name, kind, attempt, worker_id, run_at_ms, progress, message, body, body_bytes)
    select
        new.updated_at_ms, new.id, new.queue, new.name, kind, new.attempt, new.worker_id,
        case when kind in ('queued', 'retrying', 'suspended', 'lease_lost', 'resumed') then new.run_at_ms end,
        case when kind = 'progress' then new.progress end,
        case when kind = 'progress' then new.message end,
        case
            when kind = 'succeeded' and length(cast(new.result as blob)) <= 8192 then new.result
            when kind in ('failed', 'retrying') then new.error
        end,
        case when kind = 'succeeded' then length(cast(new.result as blob)) end
    from (select case
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
    end as kind);
end;
