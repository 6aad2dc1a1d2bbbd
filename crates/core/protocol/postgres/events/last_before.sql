-- The last event before a cut: the newest one a sweep to it deletes.
select txid::text::bigint, seq from cairnq_events
where (txid, seq) < ($1::bigint::text::xid8, $2::bigint)
order by txid desc, seq desc
limit 1
