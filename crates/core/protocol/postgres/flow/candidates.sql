-- The next due queued tasks of a name on one queue, in claim order, skipping
-- the groups in $4 (full, or held by another claimer), and starting after the
-- cursor ($5 priority, $6 run_at_ms, $7 id; all null for the first chunk).
-- Nothing is locked: the picked ones are locked when claimed. Equality on
-- queue, status and name walks cairnq_tasks_claim_name_idx in order, so the
-- walk stops at $8.
-- $1 queue, $2 name, $3 now, $4 excluded groups (text[]), $8 limit.
select id, coalesce(metadata->>'cairnq.group', '') as grp, priority, run_at_ms
from cairnq_tasks
where status = 'queued'
  and queue = $1::text
  and name = $2::text
  and run_at_ms <= $3::bigint
  and coalesce(metadata->>'cairnq.group', '') not in (select unnest($4::text[]))
  and ($7::text is null
       or priority < $5::bigint
       or (priority = $5::bigint
           and (run_at_ms > $6::bigint or (run_at_ms = $6::bigint and id > $7::text))))
order by priority desc, run_at_ms asc, id asc
limit $8::bigint
