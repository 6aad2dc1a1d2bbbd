-- Counts per queue and status; with $1 set (specialized by the store) only that
-- queue, through a claim index's (queue, status) prefix.
-- $1 queue (text, null = all queues).
select queue, status, count(*) from cairnq_tasks
where ($1::text is null or queue = $1::text)
group by queue, status
order by queue, status
