-- One read of the log, in one statement (one snapshot, one round trip):
-- the final events after a position that pass the filters, in position
-- order, up to a limit (part 2), the newest final position (part 0, none
-- while nothing is final) and the last position retention deleted (part 1,
-- none before a sweep), and whether committed events wait for an older
-- transaction to end (part 3): that end may notify nobody. Final: written
-- by a transaction older than every running one (below the snapshot's
-- xmin), so nothing can commit behind it.
with bound as materialized (
    select pg_snapshot_xmin(pg_current_snapshot()) as xmin
)
select * from (
    (select
        txid::text::bigint, seq, null::bigint, null::text, null::text, null::text, null::text,
        null::integer, null::text, null::bigint, null::double precision, null::text, null::text,
        null::integer, 0 as part
    from cairnq_events, bound
    where txid < bound.xmin
    order by txid desc, seq desc
    limit 1)
    union all
    select
        major, minor, null, null, null, null, null, null, null, null, null, null, null, null, 1
    from cairnq_events_horizon
    where id = 1
    union all
    (select
        txid::text::bigint, seq, at_ms, task_id, queue, name, kind, attempt, worker_id, run_at_ms,
        progress, message, body, body_bytes, 2
    from cairnq_events, bound
    where (txid, seq) > ($1::bigint::text::xid8, $2::bigint)
      and txid < bound.xmin
      and ($3::text is null or queue = $3::text)
      and ($4::text is null or name = $4::text)
      and ($5::text is null or task_id = $5::text)
    order by txid, seq
    limit $6::bigint)
    union all
    select null, null, null, null, null, null, null, null, null, null, null, null, null, null, 3
    from bound
    where exists (select 1 from cairnq_events where txid >= bound.xmin)
) as parts
order by part, 1, 2
