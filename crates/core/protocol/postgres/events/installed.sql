-- Whether the events table exists in the connection's schema (a database
-- nobody subscribed on has none).
select to_regclass('cairnq_events') is not null
