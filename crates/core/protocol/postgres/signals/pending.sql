-- A task's signals no wait has consumed, in the order sent: the size of each
-- payload in bytes, never the payload itself.
-- $1 task_id.
select name, octet_length(payload), sent_at_ms
from cairnq_signals
where task_id = $1::text and consumed_at_ms is null
order by id
