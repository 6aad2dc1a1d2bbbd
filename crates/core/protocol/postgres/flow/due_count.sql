-- How many due queued tasks of a name remain on one queue, counted up to $4:
-- after a flow draw's chunk claimed less than it wanted, whether rows past
-- the ones it read remain. $1 queue, $2 name, $3 now.
select count(*) from (
    select 1 from cairnq_tasks
    where status = 'queued'
      and queue = $1::text
      and name = $2::text
      and run_at_ms <= $3::bigint
    limit $4::bigint
) as due
