-- A task's waits for a signal not yet received, as the dashboard and the
-- command line show them.
select step_id, name, timeout_at_ms, created_at_ms
from cairnq_signal_waits
where task_id = :task_id and outcome = 'waiting'
order by created_at_ms, step_id
