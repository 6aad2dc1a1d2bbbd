-- Whether the queue pauses table exists in the connection's schema (a
-- database may never have had a pause).
select to_regclass('cairnq_queue_pauses') is not null
