-- No parameters.
select queue, status, count(*) from cairnq_tasks group by queue, status order by queue, status
