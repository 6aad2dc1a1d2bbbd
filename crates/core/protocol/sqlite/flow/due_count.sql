-- How many due queued tasks of a name remain on one queue, counted up to
-- :bound: after a flow draw's chunk claimed less than it wanted, whether
-- rows past the ones it read remain. :queue, :name, :now, :bound.
select count(*) from (
    select 1 from cairnq_tasks
    where status = 'queued'
      and queue = :queue
      and name = :name
      and run_at_ms <= :now
    limit :bound
)
