-- A restart drops step $2 and every step stored after it, in the order the
-- steps are listed (stored-at time, then step id).
-- $1 task_id, $2 step_id, $3 created_at_ms.
delete from cairnq_steps
where task_id = $1::text
  and (created_at_ms > $3::bigint or (created_at_ms = $3::bigint and step_id >= $2::text))
