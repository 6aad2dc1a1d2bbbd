-- Whether the queue pauses table exists (a database may never have had a pause).
select exists (
    select 1 from sqlite_master where type = 'table' and name = 'cairnq_queue_pauses'
)
