-- One chunk of a flow draw without group limits reads the first $4 due
-- queued tasks of a name on one queue in claim order (walking
-- cairnq_tasks_claim_name_idx): id and group ('' for none). Under group
-- limits limits_and_locks reads them instead, beside its group locks. Rows
-- another draw has locked are skipped, and these stay locked until the
-- transaction ends. $1 queue, $2 name, $3 now; $4 is baked into the text as
-- a literal (protocol::with_literal_limit), so the prepared plan serves every
-- call.
select id, coalesce(metadata->>'cairnq.group', '') as grp
from cairnq_tasks
where status = 'queued'
  and queue = $1::text
  and name = $2::text
  and run_at_ms <= $3::bigint
order by priority desc, run_at_ms asc, id asc
limit $4::bigint
for update skip locked
