-- A signal for a task, in the order sent (its id).
-- $1 task_id, $2 name, $3 payload (JSON text).
insert into cairnq_signals (task_id, name, payload, sent_at_ms)
values ($1::text, $2::text, $3::text, (extract(epoch from now()) * 1000)::bigint)
