-- Whether the events tables and the second form of their triggers
-- (`node_events_0002.sql`) are in place: a database nobody subscribed on has
-- neither, one an earlier version subscribed on has the tables only.
select exists (
    select 1 from cairnq_migrations where name = 'node_events_0002.sql'
)
