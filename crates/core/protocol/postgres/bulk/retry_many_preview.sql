-- retryMany's dry run: the page retry_many.sql would change now, its candidate
-- predicate word for word (a test holds them equal), read instead of written.
-- $1 status, $2 queue, $3 name, $4 finished_after, $5 finished_before, $6 limit.
select id from cairnq_tasks
    where status >= $1::text and status <= $1::text
      and completed_at_ms is not null
      and ($2::text is null or queue = $2::text)
      and ($3::text is null or name = $3::text)
      and ($4::bigint is null or completed_at_ms >= $4::bigint)
      and ($5::bigint is null or completed_at_ms < $5::bigint)
    order by status, completed_at_ms
    limit $6::bigint
