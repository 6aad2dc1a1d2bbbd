-- Per queue, how long (ms) its longest-waiting due task has been due: the
-- metrics' queue age, on the database clock (which stamps run_at_ms). The
-- queued rows of each queue, through a claim index's (queue, status) prefix.
select queue, max(now_ms - run_at_ms)::bigint from cairnq_tasks,
    (select (extract(epoch from clock_timestamp()) * 1000)::bigint as now_ms) as clock
where status = 'queued' and run_at_ms <= now_ms
group by queue
order by queue
