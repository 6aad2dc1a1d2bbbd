-- Retention by count (docs/api.md, "Retention"): the finished rows a rule matches
-- past its $1 most recently completed, $5 at a time from the newest of them. Key
-- rows cascade. Candidates are locked SKIP LOCKED as purge.sql's are: a skipped
-- row is not counted among the kept, so only rows past the newest $1 ever go.
-- queue/status/name are optional equalities (null = off), specialized when set.
-- $1 keep, $2 queue, $3 status, $4 name, $5 limit.
delete from cairnq_tasks as task
where task.ctid = any(array(
    select ctid from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and ($2::text is null or queue = $2::text)
      and ($3::text is null or status = $3::text)
      and ($4::text is null or name = $4::text)
    order by completed_at_ms desc
    limit $5::bigint offset $1::bigint
    for update skip locked
))
returning task.id
