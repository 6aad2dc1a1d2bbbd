-- The newest final event's position (none: nothing final yet).
select txid::text::bigint, seq from cairnq_events
where txid < $1::bigint::text::xid8
order by txid desc, seq desc
limit 1
