-- Whether the events table exists (a database nobody subscribed on has none).
select exists (
    select 1 from sqlite_master where type = 'table' and name = 'cairnq_events'
)
