-- Every transaction with a smaller id has ended: events below it are final.
select pg_snapshot_xmin(pg_current_snapshot())::text::bigint
