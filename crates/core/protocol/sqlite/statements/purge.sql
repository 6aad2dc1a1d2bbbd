-- The only delete: finished rows past the cutoff, oldest completion first. Key rows cascade.
delete from cairnq_tasks
where id in (
    select id from cairnq_tasks
    where status in ('succeeded', 'failed', 'canceled')
      and completed_at_ms is not null
      and completed_at_ms < :before_ms
    order by completed_at_ms
    limit :limit
)
returning id
