-- A wait step as stored: its name, timeout, how it ended and, once
-- signaled, the payload it consumed (replayed by every later run).
select wait.name, wait.timeout_at_ms, wait.outcome, signal.payload
from cairnq_signal_waits as wait
left join cairnq_signals as signal on signal.id = wait.signal_id
where wait.task_id = :task_id and wait.step_id = :step_id
