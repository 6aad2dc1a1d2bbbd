-- cancelMany's dry run: the page cancel_many.sql would change now, its candidate
-- predicate word for word (a test holds them equal), read instead of written.
-- $1 status, $2 queue, $3 name, $4 limit.
select id from cairnq_tasks
    where status in ('queued', 'running')
      and (status = 'queued' or cancel_requested_at_ms is null)
      and ($1::text is null or status = $1::text)
      and ($2::text is null or queue = $2::text)
      and ($3::text is null or name = $3::text)
    limit $4::bigint
