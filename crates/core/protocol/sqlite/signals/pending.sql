-- A task's signals no wait has consumed, in the order sent: the size of each
-- payload in bytes, never the payload itself.
select name, length(cast(payload as blob)), sent_at_ms
from cairnq_signals
where task_id = :task_id and consumed_at_ms is null
order by id
