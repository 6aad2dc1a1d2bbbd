-- Push wakeups (docs/protocol.md, "Wakes (LISTEN/NOTIFY)"): every writer,
-- whatever its SDK, wakes the listeners because the trigger lives in the
-- database. Leaves schema_version alone.
create or replace function cairnq_notify() returns trigger
language plpgsql as $$
begin
    -- OLD is only read on updates: older servers refuse to touch it in an insert trigger.
    if tg_op = 'INSERT' then
        if new.status = 'queued' then
            perform pg_notify('cairnq_queued', new.queue);
        end if;
    elsif new.status = 'queued' then
        if old.status is distinct from new.status then
            perform pg_notify('cairnq_queued', new.queue);
        end if;
    elsif new.status in ('succeeded', 'failed', 'canceled')
        and old.status not in ('succeeded', 'failed', 'canceled') then
        perform pg_notify('cairnq_done', new.id);
    end if;
    return null;
end;
$$;

drop trigger if exists cairnq_tasks_notify on cairnq_tasks;
create trigger cairnq_tasks_notify
    after insert or update of status on cairnq_tasks
    for each row
    when (new.status is distinct from 'running')
    execute procedure cairnq_notify();
