-- The first event young enough to keep (rows are in time order, near enough).
select 0, seq from cairnq_events where at_ms >= :cutoff_ms order by seq limit 1
