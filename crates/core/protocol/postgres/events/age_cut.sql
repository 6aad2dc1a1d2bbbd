-- The first event young enough to keep (rows are in time order, near enough).
select txid::text::bigint, seq from cairnq_events
where at_ms >= $1::bigint
order by txid, seq
limit 1
