-- One chunk of a flow draw reads the first :rows due queued tasks of a name
-- on one queue in claim order (walking cairnq_tasks_claim_name_idx): id and
-- group ('' for none). The core picks among them (store/flow/pick.rs).
-- :queue, :name, :now, :rows.
select id,
    coalesce(cast(json_extract(metadata, '$."cairnq.group"') as text), '')
from cairnq_tasks
where status = 'queued'
  and queue = :queue
  and name = :name
  and run_at_ms <= :now
order by priority desc, run_at_ms asc, id asc
limit :rows
