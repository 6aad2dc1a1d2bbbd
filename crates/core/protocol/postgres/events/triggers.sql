-- The triggers' second form: task events recorded once per statement
-- (docs/protocol.md, "Events"; ledger `node_events_0002.sql`, after
-- `node_events_0001.sql`): the per-row
-- triggers of 0001 made a plpgsql call, an insert and a notify for each row,
-- so a claim or completion batch of 64 tasks made 64 of each. Transitions
-- (a status or run time that changed) are now one call per statement over
-- its transition tables, one insert of all its events, one notify when any
-- were recorded. Transition tables allow no column list, so every update
-- statement (heartbeats too) runs the update trigger; a heartbeat's rows
-- change neither, and record nothing. Progress and cancel requests, the
-- writes that leave a running task running, keep a row trigger on their
-- columns: a heartbeat sets none of them, and a progress that repeats its
-- value is still an event.
drop trigger if exists cairnq_events_on_insert on cairnq_tasks;
drop trigger if exists cairnq_events_on_update on cairnq_tasks;
drop function if exists cairnq_events_record();

create or replace function cairnq_events_inserted() returns trigger
language plpgsql as $$
begin
    insert into cairnq_events (at_ms, task_id, queue, name, kind, attempt, run_at_ms)
    select updated_at_ms, id, queue, name, status, attempt,
        case when status = 'queued' then run_at_ms end
    from cairnq_events_new;
    if found then
        perform pg_notify('cairnq_events', '');
    end if;
    return null;
end;
$$;

-- A requeue from running tells its cause by the row alone: the recovery of
-- an expired lease runs where the lease had run out (every owner's write
-- needs it live), a suspension gives the attempt back, a retry keeps it.
create or replace function cairnq_events_transitions() returns trigger
language plpgsql as $$
begin
    insert into cairnq_events
        (at_ms, task_id, queue, name, kind, attempt, worker_id, run_at_ms, body, body_bytes)
    select
        n.updated_at_ms, n.id, n.queue, n.name, t.kind, n.attempt, n.worker_id,
        case when t.kind in ('queued', 'retrying', 'suspended', 'lease_lost', 'resumed') then n.run_at_ms end,
        case
            when t.kind = 'succeeded' and octet_length(n.result::text) <= 8192 then n.result::text
            when t.kind in ('failed', 'retrying') then n.error::text
        end,
        case when t.kind = 'succeeded' then octet_length(n.result::text) end
    from cairnq_events_new as n
    join cairnq_events_old as o on o.id = n.id
    cross join lateral (select case
        when n.status <> 'queued' then
            case when n.status = 'running' then 'started' else n.status end
        when o.status = 'running' and o.lease_until_ms <= n.updated_at_ms then 'lease_lost'
        when o.status = 'running' and n.attempt < o.attempt then 'suspended'
        when o.status = 'running' then 'retrying'
        when o.status = 'queued' and n.run_at_ms < o.run_at_ms then 'resumed'
        else 'queued'
    end as kind) as t
    where (n.status is distinct from o.status or n.run_at_ms is distinct from o.run_at_ms)
      and not (o.status = 'running' and n.status = 'running');
    if found then
        perform pg_notify('cairnq_events', '');
    end if;
    return null;
end;
$$;

create or replace function cairnq_events_running() returns trigger
language plpgsql as $$
declare
    kind text := case when new.cancel_requested_at_ms is not distinct from old.cancel_requested_at_ms
        then 'progress' else 'cancel_requested' end;
begin
    insert into cairnq_events
        (at_ms, task_id, queue, name, kind, attempt, worker_id, progress, message)
    values (
        new.updated_at_ms, new.id, new.queue, new.name, kind, new.attempt, new.worker_id,
        case when kind = 'progress' then new.progress end,
        case when kind = 'progress' then new.message end
    );
    perform pg_notify('cairnq_events', '');
    return null;
end;
$$;

create trigger cairnq_events_on_insert
    after insert on cairnq_tasks
    referencing new table as cairnq_events_new
    for each statement
    execute function cairnq_events_inserted();
create trigger cairnq_events_on_update
    after update on cairnq_tasks
    referencing old table as cairnq_events_old new table as cairnq_events_new
    for each statement
    execute function cairnq_events_transitions();
create trigger cairnq_events_on_running
    after update of progress, message, cancel_requested_at_ms on cairnq_tasks
    for each row
    when (old.status = 'running' and new.status = 'running')
    execute function cairnq_events_running();
