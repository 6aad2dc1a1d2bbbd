-- Under a per-group rate, the starts of a budget (a task name's own, or a
-- key's when $3 = 1: $2) after $4 per group, for the groups $1 of a flow
-- draw's chunk only ('' being the tasks without a group). Runs in a later
-- statement than limits_and_locks, which locked the groups, so the counts
-- see what the locks' previous holders committed.
select grp, count(*)
from cairnq_flow_starts
where name = $2::text
  and shared_key = $3::bigint
  and grp = any($1::text[])
  and started_at_ms > $4::bigint
group by grp
