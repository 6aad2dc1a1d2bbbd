-- Remember the last position a sweep deleted.
insert into cairnq_events_horizon (id, major, minor) values (1, :major, :minor)
on conflict (id) do update set major = excluded.major, minor = excluded.minor
