-- A task's waits for a signal not yet received, as the dashboard and the
-- command line show them.
-- $1 task_id.
select step_id, name, timeout_at_ms, created_at_ms
from cairnq_signal_waits
where task_id = $1::text and outcome = 'waiting'
order by created_at_ms, step_id
