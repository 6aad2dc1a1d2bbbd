-- Claim the tasks of the ids a flow draw's chunk picked ($1), at the database
-- clock: rows this transaction read queued and locked (limits_and_locks or
-- draw_scan), so no other claimer can have taken them, and the update finds
-- them by the primary key alone. When $4, records one start per claimed row at
-- its claim time in the budget $6 (a key's when $7 = 1, else a task name's),
-- under its group when $5, else under ''. $2 worker_id, $3 lease_ms.
with clock as (
    select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
), claimed as (
    update cairnq_tasks as task set
        status = 'running',
        worker_id = $2::text,
        lease_until_ms = clock.ms + $3::bigint,
        attempt = task.attempt + 1,
        updated_at_ms = clock.ms
    from clock
    where task.id = any($1::text[]) and task.status = 'queued'
    returning task.*
), recorded as (
    insert into cairnq_flow_starts (name, shared_key, grp, started_at_ms)
    select $6::text,
        $7::bigint,
        case when $5::boolean then coalesce(claimed.metadata->>'cairnq.group', '') else '' end,
        claimed.updated_at_ms
    from claimed
    where $4::boolean
)
select * from claimed
