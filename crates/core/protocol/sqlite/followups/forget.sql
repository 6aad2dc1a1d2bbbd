-- The rows of follow-ups whose task has ended (or is gone): released by
-- `release.sql` in the same transaction.
delete from cairnq_followups
where not exists (
    select 1 from cairnq_tasks as followed
    where followed.id = cairnq_followups.after_id and followed.status in ('queued', 'running')
)
