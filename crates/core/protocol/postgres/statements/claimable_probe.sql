-- Read-only: is a claim transaction worth opening? Queued work that is due on our
-- queues and names, or an expired lease anywhere (recovering it is everyone's job).
-- Two separate EXISTS: an OR inside one gets no index. Each reads the clock once,
-- through its scalar subquery, so the time bounds an index scan: the queued arm
-- walks cairnq_tasks_claim_idx, the lease arm the partial cairnq_tasks_lease_idx
-- (hence both of that index's predicate terms).
-- $1 queues (text[]), $2 names (text[], null = any name).
select exists (
    select 1 from cairnq_tasks
    where status = 'queued'
      and queue = any($1::text[])
      and ($2::text[] is null or name = any($2::text[]))
      and run_at_ms <= (select (extract(epoch from clock_timestamp()) * 1000)::bigint)
) or exists (
    select 1 from cairnq_tasks
    where status = 'running' and lease_until_ms is not null
      and lease_until_ms <= (select (extract(epoch from clock_timestamp()) * 1000)::bigint)
) as has_work
