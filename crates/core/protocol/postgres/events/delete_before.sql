-- Retention: every event before the cut.
delete from cairnq_events where (txid, seq) < ($1::bigint::text::xid8, $2::bigint)
