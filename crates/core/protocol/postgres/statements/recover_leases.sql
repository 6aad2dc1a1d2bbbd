-- Expired leases, any queue, any name: cancel wins, attempts left re-queue, otherwise
-- the task fails with the protocol's lease-expiry envelope.
-- No parameters. The wall clock is read once for the whole statement (the CTE holds
-- a volatile call, so it is evaluated once): a per-row volatile comparison would
-- defeat the lease index. Rows another transaction holds are skipped, not waited on.
with clock as (
    select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
), expired as (
    select id from cairnq_tasks
    where status = 'running' and lease_until_ms is not null
      and lease_until_ms <= (select ms from clock)
    for update skip locked
)
update cairnq_tasks as task set
    status = case
        when task.cancel_requested_at_ms is not null then 'canceled'
        when task.attempt < task.max_attempts then 'queued'
        else 'failed'
    end,
    worker_id = case
        when task.cancel_requested_at_ms is null and task.attempt < task.max_attempts then null
        else task.worker_id
    end,
    lease_until_ms = null,
    run_at_ms = case
        when task.cancel_requested_at_ms is null and task.attempt < task.max_attempts then clock.ms
        else task.run_at_ms
    end,
    error = case
        when task.cancel_requested_at_ms is null and task.attempt >= task.max_attempts
            then '{"type":"LeaseExpired","code":"lease_expired","message":"task lease expired and max attempts reached","retryable":false,"details":{}}'::jsonb
        else task.error
    end,
    completed_at_ms = case
        when task.cancel_requested_at_ms is null and task.attempt < task.max_attempts then task.completed_at_ms
        else clock.ms
    end,
    progress = case
        when task.cancel_requested_at_ms is null and task.attempt < task.max_attempts then null
        else task.progress
    end,
    message = case
        when task.cancel_requested_at_ms is null and task.attempt < task.max_attempts then null
        else task.message
    end,
    updated_at_ms = clock.ms
from expired, clock
where task.id = expired.id
returning task.id
