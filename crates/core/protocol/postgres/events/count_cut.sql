-- The first of the newest $1 events.
select txid::text::bigint, seq from cairnq_events
order by txid desc, seq desc
limit 1 offset $1::bigint - 1
