-- Tasks suspended waiting on one of these (finished) children run now: a
-- parent waits queued with a run_at_ms in the future (its bounded re-check).
-- The status does not change, so the notify trigger stays silent: the
-- statement tells the parents' queues itself, on the protocol's channel.
-- $1 child ids (text[]).
with clock as (
    select (extract(epoch from now()) * 1000)::bigint as ms
), woken as (
    update cairnq_tasks as task set
        run_at_ms = clock.ms,
        updated_at_ms = clock.ms
    from clock
    where task.id in (
        select step.task_id from cairnq_steps as step where step.child_id = any($1::text[])
    )
      and task.status = 'queued' and task.run_at_ms > clock.ms
    returning task.queue
)
select count(pg_notify('cairnq_queued', queue)) from (select distinct queue from woken) as queues
