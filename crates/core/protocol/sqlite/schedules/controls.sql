-- The schedules table's controls (docs/protocol.md, "Schedules"): overlap,
-- interval schedules, the start/end window, the occurrence limit and the
-- counts of fired and skipped occurrences. Applied with the table, and to a
-- table an earlier version created on its next use; recorded in the ledger
-- as `node_schedules_0002.sql`, a name other SDKs' runners ignore. A worker
-- of an earlier version reads rows by position and never sees these columns.
alter table cairnq_schedules add column overlap text not null default 'allow';
alter table cairnq_schedules add column every_ms integer;
alter table cairnq_schedules add column start_at_ms integer;
alter table cairnq_schedules add column end_at_ms integer;
alter table cairnq_schedules add column run_limit integer;
alter table cairnq_schedules add column fired_count integer not null default 0;
alter table cairnq_schedules add column skipped_count integer not null default 0;
alter table cairnq_schedules add column last_skipped_at_ms integer;
