-- Claim the picked tasks that are still queued and that no other claimer
-- holds, as the claim statements do, and record one start per task claimed
-- when the name has a rate limit: at its claim time, under its group when the
-- rate is per group, else under ''.
-- $1 ids (text[]), $2 worker_id, $3 lease_ms, $4 name, $5 record starts,
-- $6 per group.
with clock as (
    select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
), picked as (
    select id from cairnq_tasks
    where id = any($1::text[]) and status = 'queued'
    for update skip locked
), claimed as (
    update cairnq_tasks as task set
        status = 'running',
        worker_id = $2::text,
        lease_until_ms = clock.ms + $3::bigint,
        attempt = task.attempt + 1,
        updated_at_ms = clock.ms
    from picked, clock
    where task.id = picked.id
    returning task.*
), recorded as (
    insert into cairnq_flow_starts (name, grp, started_at_ms)
    select $4::text,
        case when $6::boolean then coalesce(claimed.metadata->>'cairnq.group', '') else '' end,
        claimed.updated_at_ms
    from claimed
    where $5::boolean
)
select * from claimed
