-- Follow-ups whose task has ended (or is gone) become due: at their start,
-- or now if it has passed; their rows go. A second releaser waits on the
-- rows' locks and then finds them gone. Answers the released ids.
with ended as (
    delete from cairnq_followups as held
    where not exists (
        select 1 from cairnq_tasks as followed
        where followed.id = held.after_id and followed.status in ('queued', 'running')
    )
    returning held.task_id, held.run_at_ms
)
update cairnq_tasks as task set
    run_at_ms = greatest(ended.run_at_ms, clock.ms),
    updated_at_ms = clock.ms
from ended, (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
where task.id = ended.task_id and task.status = 'queued'
returning task.id
