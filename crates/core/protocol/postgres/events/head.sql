-- The newest event written below a transaction id (the sweep passes the
-- largest: the newest of all).
select txid::text::bigint, seq from cairnq_events
where txid < $1::bigint::text::xid8
order by txid desc, seq desc
limit 1
