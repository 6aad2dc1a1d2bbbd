-- Whether a signal of this name waits for the task, unconsumed: a run about
-- to suspend for its waits is then due at once.
select exists (
    select 1 from cairnq_signals
    where task_id = :task_id and name = :name and consumed_at_ms is null
)
