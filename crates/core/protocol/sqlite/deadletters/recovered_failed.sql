-- Of the tasks lease recovery just wrote (their ids a JSON array), those it
-- failed for good: the core decides which of them a dead letter follows.
select * from cairnq_tasks
where id in (select value from json_each(:ids)) and status = 'failed'
