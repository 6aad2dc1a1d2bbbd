-- The task waiting (suspended, queued until its timeout) for a signal of
-- this name runs now: the wake a child's completion gives its parent. The
-- status does not change, so the notify trigger stays silent: the statement
-- tells the task's queue itself, on the protocol's channel.
-- $1 task_id, $2 name.
with clock as (
    select (extract(epoch from now()) * 1000)::bigint as ms
), woken as (
    update cairnq_tasks as task set
        run_at_ms = clock.ms,
        updated_at_ms = clock.ms
    from clock
    where task.id = $1::text and task.status = 'queued' and task.run_at_ms > clock.ms
      and exists (
        select 1 from cairnq_signal_waits as wait
        where wait.task_id = $1::text and wait.name = $2::text and wait.outcome = 'waiting'
      )
    returning task.queue
)
select count(pg_notify('cairnq_queued', queue)) from woken
