-- The last position retention deleted, if it deleted any.
select major, minor from cairnq_events_horizon where id = 1
