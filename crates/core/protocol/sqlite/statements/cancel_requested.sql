-- The worker's cancel watch (docs/api.md, "Time limits and aborts"): which of
-- the listed tasks a cancel was requested for (or that ended canceled).
select id from cairnq_tasks
where id in (select value from json_each(:ids))
  and (cancel_requested_at_ms is not null or status = 'canceled')
