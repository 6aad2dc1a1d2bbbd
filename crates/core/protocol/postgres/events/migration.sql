-- Task events (docs/protocol.md, "Events"): created by the first subscription,
-- never on a database nobody subscribes on, and recorded in the ledger as
-- `node_events_0001.sql`, a name other SDKs' runners ignore. The triggers live
-- in the database, so every writer's change (any SDK's, any process's) is
-- recorded in the transaction that makes it, and notifies `cairnq_events`
-- (one notice per transaction: Postgres folds equal ones). A position is
-- (txid, seq): readers only read transactions older than every running one,
-- so a transaction committing late can never land behind a position already
-- handed out.
create table if not exists cairnq_events (
    txid xid8 not null default pg_current_xact_id(),
    seq bigint generated always as identity,
    at_ms bigint not null,
    task_id text not null,
    queue text not null,
    name text not null,
    kind text not null,
    attempt integer not null,
    worker_id text,
    run_at_ms bigint,
    progress double precision,
    message text,
    body text,
    body_bytes integer,
    primary key (txid, seq)
);
-- The last position retention deleted: a listener behind it missed events.
create table if not exists cairnq_events_horizon (
    id integer primary key check (id = 1),
    major bigint not null,
    minor bigint not null
);
-- Heartbeats set none of the update trigger's columns, so they never run it.
-- A requeue from running tells its cause by the row alone: the recovery of an
-- expired lease runs where the lease had run out (every owner's write needs
-- it live), a suspension gives the attempt back, a retry keeps it.
create or replace function cairnq_events_record() returns trigger
language plpgsql as $$
declare
    kind text;
begin
    if tg_op = 'INSERT' then
        kind := new.status;
    elsif new.status is distinct from old.status or new.status = 'running'
        or new.run_at_ms is distinct from old.run_at_ms then
        kind := case
            when new.status = 'running' and old.status = 'running' then
                case when new.cancel_requested_at_ms is not distinct from old.cancel_requested_at_ms
                    then 'progress' else 'cancel_requested' end
            when new.status <> 'queued' then
                case when new.status = 'running' then 'started' else new.status end
            when old.status = 'running' and old.lease_until_ms <= new.updated_at_ms then 'lease_lost'
            when old.status = 'running' and new.attempt < old.attempt then 'suspended'
            when old.status = 'running' then 'retrying'
            when old.status = 'queued' and new.run_at_ms < old.run_at_ms then 'resumed'
            else 'queued'
        end;
    else
        return null;
    end if;
    insert into cairnq_events
        (at_ms, task_id, queue, name, kind, attempt, worker_id, run_at_ms, progress, message, body, body_bytes)
    values (
        new.updated_at_ms, new.id, new.queue, new.name, kind, new.attempt,
        case when kind = 'queued' and tg_op = 'INSERT' then null else new.worker_id end,
        case when kind in ('queued', 'retrying', 'suspended', 'lease_lost', 'resumed') then new.run_at_ms end,
        case when kind = 'progress' then new.progress end,
        case when kind = 'progress' then new.message end,
        case
            when kind = 'succeeded' and octet_length(new.result::text) <= 8192 then new.result::text
            when kind in ('failed', 'retrying') then new.error::text
        end,
        case when kind = 'succeeded' then octet_length(new.result::text) end
    );
    perform pg_notify('cairnq_events', '');
    return null;
end;
$$;
drop trigger if exists cairnq_events_on_insert on cairnq_tasks;
create trigger cairnq_events_on_insert
    after insert on cairnq_tasks
    for each row
    execute procedure cairnq_events_record();
drop trigger if exists cairnq_events_on_update on cairnq_tasks;
create trigger cairnq_events_on_update
    after update of status, progress, message, run_at_ms on cairnq_tasks
    for each row
    execute procedure cairnq_events_record();
