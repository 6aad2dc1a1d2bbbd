-- Whether a signal of this name waits for the task, unconsumed: a run about
-- to suspend for its waits is then due at once.
-- $1 task_id, $2 name.
select exists (
    select 1 from cairnq_signals
    where task_id = $1::text and name = $2::text and consumed_at_ms is null
)
