-- Per queue, how long (ms) its longest-waiting due task has been due: the
-- metrics' queue age. The queued rows of each queue, through a claim index's
-- (queue, status) prefix.
select queue, :now - min(run_at_ms) from cairnq_tasks
where status = 'queued' and run_at_ms <= :now
group by queue
order by queue
