-- Headroom under a depth limit; counts at most max_depth index entries.
select :max_depth - count(*) from (
    select 1 from cairnq_tasks where queue = :queue and status = 'queued' limit :max_depth
)
