-- The first of the newest :keep events.
select 0, seq from cairnq_events order by seq desc limit 1 offset :keep - 1
