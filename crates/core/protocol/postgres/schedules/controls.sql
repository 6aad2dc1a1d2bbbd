-- The schedules table's controls (docs/protocol.md, "Schedules"): overlap,
-- interval schedules, the start/end window, the occurrence limit and the
-- counts of fired and skipped occurrences. Applied with the table, and to a
-- table an earlier version created on its next use; recorded in the ledger
-- as `node_schedules_0002.sql`, a name other SDKs' runners ignore. A worker
-- of an earlier version reads rows by position and never sees these columns.
alter table cairnq_schedules
    add column if not exists overlap text not null default 'allow',
    add column if not exists every_ms bigint,
    add column if not exists start_at_ms bigint,
    add column if not exists end_at_ms bigint,
    add column if not exists run_limit bigint,
    add column if not exists fired_count bigint not null default 0,
    add column if not exists skipped_count bigint not null default 0,
    add column if not exists last_skipped_at_ms bigint;
