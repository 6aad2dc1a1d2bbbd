-- A new queued task; the caller supplies the id, the database the clock.
-- $1 id, $2 name, $3 queue, $4 payload (JSON text), $5 metadata (JSON text),
-- $6 max_attempts, $7 priority, $8 delay_ms, $9 parent_id, $10 root_id, $11 correlation_id.
-- clock_timestamp(): a keyed insert may have waited on the key lock, and the
-- transaction's start time would make a delayed task fire early.
insert into cairnq_tasks (
    id, name, queue, status, payload, metadata, max_attempts, priority,
    run_at_ms, parent_id, root_id, correlation_id, created_at_ms, updated_at_ms
)
select
    $1::text, $2::text, $3::text, 'queued', $4::text::jsonb, $5::text::jsonb, $6::bigint, $7::bigint,
    clock.ms + $8::bigint, $9::text, $10::text, $11::text, clock.ms, clock.ms
from (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) as clock
returning *
