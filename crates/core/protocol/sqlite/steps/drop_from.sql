-- A restart drops step :step_id and every step stored after it, in the order
-- the steps are listed (stored-at time, then step id).
delete from cairnq_steps
where task_id = :task_id
  and (created_at_ms > :created_at_ms or (created_at_ms = :created_at_ms and step_id >= :step_id))
