-- Before a chunk of a flow draw with per-group limits: try the locks of up
-- to $5 limited groups this transaction does not hold yet ($6), the first to
-- appear among the first $4 due queued tasks of a name on one queue in claim
-- order; answers the groups locked. '' is a limited group only when $7 (a
-- per-group rate). A group's key is `cairnq.flow:` and the JSON array
-- [name, group]; seed 1 keeps it apart from the keyed submits' locks. Never
-- waits: a group another claimer holds is left to it for this draw, so two
-- claimers never wait on each other whatever order they lock in.
-- $1 queue, $2 name, $3 now.
with scanned as (
    select coalesce(metadata->>'cairnq.group', '') as grp,
        row_number() over (order by priority desc, run_at_ms asc, id asc) as position
    from (
        select metadata, priority, run_at_ms, id
        from cairnq_tasks
        where status = 'queued'
          and queue = $1::text
          and name = $2::text
          and run_at_ms <= $3::bigint
        order by priority desc, run_at_ms asc, id asc
        limit $4::bigint
    ) as due
), fresh as materialized (
    select grp from scanned
    where grp <> all($6::text[]) and (grp <> '' or $7::boolean)
    group by grp
    order by min(position)
    limit $5::bigint
)
select grp from fresh
where pg_try_advisory_xact_lock(hashtextextended('cairnq.flow:' || jsonb_build_array($2::text, grp)::text, 1))
