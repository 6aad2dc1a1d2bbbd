-- The newest event's position (none: nothing recorded yet).
select 0, seq from cairnq_events order by seq desc limit 1
