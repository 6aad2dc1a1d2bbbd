-- Before each chunk of a flow draw: the name's declared limits (null columns
-- when it has none; with its key's stored rate, as limits.sql answers them)
-- and the database clock, and, when it limits groups, the first $5 due
-- queued tasks of the name on one queue in claim order (id, group; '' for
-- none), each with whether this statement locked its group: of up to $3
-- limited groups this transaction does not hold yet ($4), the first to
-- appear. One row per task read (id null: none). The chunk's counts
-- (group_running, group_starts) come in later statements, so they see
-- what the locks' previous holders committed. A group's key is `cairnq.flow:` and the JSON
-- array [name, group], or when the name's rate has a key,
-- `cairnq.flow.key:` and [key, group] (the groups of the budget every name
-- of the key shares); seed 1 keeps it apart from the keyed submits' locks.
-- Never waits: a group another claimer holds is left to it for this draw,
-- so two claimers never wait on each other whatever order they lock in.
-- Group concurrency limits grouped tasks, a per-group rate every task (''
-- being one more group). The due rows are locked, skipping those another
-- draw holds: concurrent draws read past each other's rows to groups of
-- their own, rather than all trying the same groups at the head of the
-- queue; a locked row stays queued until this transaction ends.
-- $1 queue, $2 name; $5, the rows read, is baked into the text as a literal
-- (protocol::with_literal_limit), so the prepared plan serves every call.
with clock as (
    select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms
), limits as (
    select limits.rate_max, limits.rate_per_ms, limits.rate_per_group, limits.group_concurrency,
        limits.declared_by, limits.declared_at_ms, limits.rate_key,
        keys.rate_max as key_rate_max, keys.rate_per_ms as key_rate_per_ms,
        keys.rate_per_group as key_rate_per_group, keys.declared_by as key_declared_by,
        keys.declared_at_ms as key_declared_at_ms
    from cairnq_flow_limits as limits
    left join cairnq_flow_keys as keys on keys.key = limits.rate_key
    where limits.name = $2::text
), limited as (
    select group_concurrency is not null as grouped,
        rate_max is not null
            and coalesce(key_rate_per_group, rate_per_group) <> 0 as every,
        case when rate_key is null then 'cairnq.flow:' else 'cairnq.flow.key:' end as prefix,
        coalesce(rate_key, $2::text) as budget
    from limits
), scanned as (
    select id, coalesce(metadata->>'cairnq.group', '') as grp,
        row_number() over (order by priority desc, run_at_ms asc, id asc) as position
    from (
        select id, metadata, priority, run_at_ms
        from cairnq_tasks
        where status = 'queued'
          and queue = $1::text
          and name = $2::text
          and run_at_ms <= (select ms from clock)
          and exists (select 1 from limited where grouped or every)
        order by priority desc, run_at_ms asc, id asc
        limit $5::bigint
        for update skip locked
    ) as due
), fresh as materialized (
    select grp from scanned, limited
    where grp <> all($4::text[])
      and (limited.every or (limited.grouped and grp <> ''))
    group by grp
    order by min(position)
    limit $3::bigint
), locked as materialized (
    select grp from fresh, limited
    where pg_try_advisory_xact_lock(hashtextextended(limited.prefix || jsonb_build_array(limited.budget, grp)::text, 1))
)
select limits.rate_max, limits.rate_per_ms, limits.rate_per_group, limits.group_concurrency,
    limits.declared_by, limits.declared_at_ms, limits.rate_key,
    limits.key_rate_max, limits.key_rate_per_ms, limits.key_rate_per_group,
    limits.key_declared_by, limits.key_declared_at_ms, clock.ms,
    read.id, read.grp, read.locked
from clock
left join limits on true
left join (
    select scanned.id, scanned.grp, locked.grp is not null as locked, scanned.position
    from scanned
    left join locked on locked.grp = scanned.grp
) as read on true
order by read.position
