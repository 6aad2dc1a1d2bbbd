-- One chunk of a flow draw with per-group limits: read the first $4 due
-- queued tasks of a name on one queue in claim order (walking
-- cairnq_tasks_claim_name_idx), rank each within its group, and claim up to
-- $5 of those whose group has room, every group's first before any group's
-- second (ties in claim order), skipping rows another claimer holds. Room:
-- $6 (group concurrency, null: none) less the group's running rows of the
-- name, for grouped rows; $7 (per-group rate max, null: none) less the
-- group's starts after $8, for every row ('' being one more group). A limited
-- group is claimed only if this transaction holds its lock ($9, taken by
-- limits_and_locks in an earlier statement, so these counts see what the lock's
-- previous holder committed). Records one start per claimed row when $12:
-- at its claim time, under its group when $13, else under ''.
-- $1 queue, $2 name, $3 now, $10 worker_id, $11 lease_ms.
with scanned as (
    select id, coalesce(metadata->>'cairnq.group', '') as grp, priority, run_at_ms
    from cairnq_tasks
    where status = 'queued'
      and queue = $1::text
      and name = $2::text
      and run_at_ms <= $3::bigint
    order by priority desc, run_at_ms asc, id asc
    limit $4::bigint
), ranked as (
    select id, grp, priority, run_at_ms,
        row_number() over (partition by grp order by priority desc, run_at_ms asc, id asc) as rank
    from scanned
), running as (
    select coalesce(metadata->>'cairnq.group', '') as grp, count(*) as n
    from cairnq_tasks
    where status = 'running' and lease_until_ms is not null
      and name = $2::text
      and $6::bigint is not null
    group by 1
), started as (
    select grp, count(*) as n
    from cairnq_flow_starts
    where name = $2::text and started_at_ms > $8::bigint
      and $7::bigint is not null
    group by grp
), picked as (
    select ranked.id
    from ranked
    left join running on running.grp = ranked.grp
    left join started on started.grp = ranked.grp
    where (($6::bigint is null or ranked.grp = '') and $7::bigint is null
           or ranked.grp = any($9::text[]))
      and ($6::bigint is null or ranked.grp = ''
           or ranked.rank + coalesce(running.n, 0) <= $6::bigint)
      and ($7::bigint is null or ranked.rank + coalesce(started.n, 0) <= $7::bigint)
    order by ranked.rank, ranked.priority desc, ranked.run_at_ms asc, ranked.id asc
    limit $5::bigint
), locked as (
    select id from cairnq_tasks
    where id in (select id from picked) and status = 'queued'
    for update skip locked
), clock as (
    select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
), claimed as (
    update cairnq_tasks as task set
        status = 'running',
        worker_id = $10::text,
        lease_until_ms = clock.ms + $11::bigint,
        attempt = task.attempt + 1,
        updated_at_ms = clock.ms
    from locked, clock
    where task.id = locked.id
    returning task.*
), recorded as (
    insert into cairnq_flow_starts (name, grp, started_at_ms)
    select $2::text,
        case when $13::boolean then coalesce(claimed.metadata->>'cairnq.group', '') else '' end,
        claimed.updated_at_ms
    from claimed
    where $12::boolean
)
select * from claimed
