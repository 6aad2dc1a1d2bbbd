-- The final events after a position that pass the filters, in position order.
select
    txid::text::bigint, seq, at_ms, task_id, queue, name, kind, attempt, worker_id, run_at_ms,
    progress, message, body, body_bytes
from cairnq_events
where (txid, seq) > ($1::bigint::text::xid8, $2::bigint)
  and txid < $3::bigint::text::xid8
  and ($4::text is null or queue = $4::text)
  and ($5::text is null or name = $5::text)
  and ($6::text is null or task_id = $6::text)
order by txid, seq
limit $7::bigint
