-- Counts per queue and status; with :queue set (specialized by the store) only that
-- queue, through a claim index's (queue, status) prefix.
select queue, status, count(*) from cairnq_tasks
where (:queue is null or queue = :queue)
group by queue, status
order by queue, status
