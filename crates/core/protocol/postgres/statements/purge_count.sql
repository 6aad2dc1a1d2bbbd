-- How many rows `purge` would delete now, at most $5 (a purge preview):
-- purge.sql's candidate predicate, word for word (a test holds them equal),
-- counted instead of locked and deleted.
-- $1 older_than_ms, $2 queue, $3 status, $4 name, $5 limit.
select count(*) from (
    select 1 from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and completed_at_ms < (extract(epoch from now()) * 1000)::bigint - $1::bigint
      and ($2::text is null or queue = $2::text)
      and ($3::text is null or status = $3::text)
      and ($4::text is null or name = $4::text)
    limit $5::bigint
) as candidates
