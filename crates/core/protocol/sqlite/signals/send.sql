-- A signal for a task, in the order sent (its id).
insert into cairnq_signals (task_id, name, payload, sent_at_ms)
values (:task_id, :name, :payload, :now)
