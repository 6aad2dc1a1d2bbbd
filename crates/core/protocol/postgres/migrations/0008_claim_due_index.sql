-- Claims order by priority desc, run_at_ms, id: both claim indexes are rebuilt so
-- that a walk in index order is claim order, tie-break included. Holds the write
-- lock for the rebuild (docs/protocol.md, "Migration ledger").
drop index if exists cairnq_tasks_claim_idx;
create index cairnq_tasks_claim_idx
    on cairnq_tasks (queue, status, priority desc, run_at_ms, id);
drop index if exists cairnq_tasks_claim_name_idx;
create index cairnq_tasks_claim_name_idx
    on cairnq_tasks (queue, status, name, priority desc, run_at_ms, id);
update cairnq_meta set value = '8' where key = 'schema_version';
