-- How many rows keep_last.sql would delete now, at most $5 (a purge preview): its
-- candidate predicate word for word (a test holds them equal), counted.
-- $1 keep, $2 queue, $3 status, $4 name, $5 limit.
select count(*) from (
    select 1 from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and ($2::text is null or queue = $2::text)
      and ($3::text is null or status = $3::text)
      and ($4::text is null or name = $4::text)
    order by completed_at_ms desc
    limit $5::bigint offset $1::bigint
) as kept_past
