-- Headroom under a depth limit; counts at most max_depth index entries.
-- $1 queue, $2 max_depth.
select $2::bigint - count(*) from (
    select 1 from cairnq_tasks where queue = $1::text and status = 'queued' limit $2::bigint
) as backlog
