-- Retention: every event before the cut.
delete from cairnq_events where seq < :cut_minor
