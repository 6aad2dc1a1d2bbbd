-- One chunk of a flow draw with per-group limits: read the first :rows due
-- queued tasks of a name on one queue in claim order (walking
-- cairnq_tasks_claim_name_idx), rank each within its group, and claim up to
-- :limit of those whose group has room, every group's first before any
-- group's second (ties in claim order). Room: :group_concurrency (null: none)
-- less the group's running rows of the name, for grouped rows; :rate_max
-- (null: no per-group rate) less the group's starts after :since, for every
-- row ('' being one more group). The running rows are read through the
-- partial lease index, which holds exactly those. Each candidate looks its
-- group's counts up (a join would build an index on them every time).
update cairnq_tasks set
    status = 'running',
    worker_id = :worker_id,
    lease_until_ms = :now + :lease_ms,
    attempt = attempt + 1,
    updated_at_ms = :now
where id in (
    with scanned as (
        select id,
            coalesce(cast(json_extract(metadata, '$."cairnq.group"') as text), '') as grp,
            priority,
            run_at_ms
        from cairnq_tasks
        where status = 'queued'
          and queue = :queue
          and name = :name
          and run_at_ms <= :now
        order by priority desc, run_at_ms asc, id asc
        limit :rows
    ),
    ranked as (
        select id, grp, priority, run_at_ms,
            row_number() over (partition by grp order by priority desc, run_at_ms asc, id asc) as rank
        from scanned
    ),
    running as (
        select coalesce(cast(json_extract(metadata, '$."cairnq.group"') as text), '') as grp,
            count(*) as n
        from cairnq_tasks indexed by cairnq_tasks_lease_idx
        where status = 'running' and lease_until_ms is not null
          and name = :name
          and :group_concurrency is not null
        group by grp
    ),
    started as (
        select grp, count(*) as n
        from cairnq_flow_starts
        where name = :name and started_at_ms > :since
          and :rate_max is not null
        group by grp
    )
    select ranked.id
    from ranked
    where (:group_concurrency is null or ranked.grp = ''
           or ranked.rank + coalesce((select n from running where running.grp = ranked.grp), 0) <= :group_concurrency)
      and (:rate_max is null or ranked.rank + coalesce((select n from started where started.grp = ranked.grp), 0) <= :rate_max)
    order by ranked.rank, ranked.priority desc, ranked.run_at_ms asc, ranked.id asc
    limit :limit
)
returning *
