-- One chunk of a flow draw reads the first $4 due queued tasks of a name on
-- one queue in claim order (walking cairnq_tasks_claim_name_idx): id, group
-- ('' for none), and what counts against that group: its running rows of the
-- name when $5 (a group concurrency is declared; read through the partial
-- lease index), its starts after $6 in the budget $8 (a key's when $9 = 1,
-- else a task name's) when $7 (a per-group rate is declared).
-- The core picks among them (store/flow/pick.rs). Runs in a later statement
-- than limits_and_locks, so its counts see what the locks' previous holders
-- committed. Rows another draw has locked are skipped (limits_and_locks).
-- $1 queue, $2 name, $3 now.
with scanned as (
    select id, coalesce(metadata->>'cairnq.group', '') as grp, priority, run_at_ms
    from cairnq_tasks
    where status = 'queued'
      and queue = $1::text
      and name = $2::text
      and run_at_ms <= $3::bigint
    order by priority desc, run_at_ms asc, id asc
    limit $4::bigint
    for update skip locked
), running as (
    select coalesce(metadata->>'cairnq.group', '') as grp, count(*) as n
    from cairnq_tasks
    where status = 'running' and lease_until_ms is not null
      and name = $2::text
      and $5::boolean
      and coalesce(metadata->>'cairnq.group', '') in (select grp from scanned)
    group by 1
), started as (
    select grp, count(*) as n
    from cairnq_flow_starts
    where name = $8::text
      and shared_key = $9::bigint
      and $7::boolean
      and grp in (select grp from scanned)
      and started_at_ms > $6::bigint
    group by grp
)
select scanned.id, scanned.grp, coalesce(running.n, 0) as running, coalesce(started.n, 0) as started
from scanned
left join running on running.grp = scanned.grp
left join started on started.grp = scanned.grp
order by scanned.priority desc, scanned.run_at_ms asc, scanned.id asc
