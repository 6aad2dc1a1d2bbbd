-- status_completed covers every lookup the status-only index served; keeping it
-- would only cost a write on every insert and status change.
drop index if exists cairnq_tasks_status_idx;
update cairnq_meta set value = '10' where key = 'schema_version';
