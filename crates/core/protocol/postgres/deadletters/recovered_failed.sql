-- Of the tasks lease recovery just wrote, those it failed for good: the core
-- decides which of them a dead letter follows.
-- $1 the recovered ids.
select * from cairnq_tasks where id = any($1::text[]) and status = 'failed'
