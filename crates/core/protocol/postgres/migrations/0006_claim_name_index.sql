-- Per-name claim draws read queue + name equality in claim order.
create index if not exists cairnq_tasks_claim_name_idx
    on cairnq_tasks (queue, status, name, priority desc, created_at_ms);
update cairnq_meta set value = '6' where key = 'schema_version';
