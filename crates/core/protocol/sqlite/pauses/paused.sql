-- Every paused queue, by name: what a worker reads every refresh (a tiny
-- table, read by its primary key's order).
select queue, paused_at_ms from cairnq_queue_pauses order by queue
