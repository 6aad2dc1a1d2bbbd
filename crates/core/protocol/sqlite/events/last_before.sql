-- The last event before a cut: the newest one a sweep to it deletes.
select 0, seq from cairnq_events where seq < :cut_minor order by seq desc limit 1
