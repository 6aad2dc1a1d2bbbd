-- Whether the events tables, their per-statement triggers
-- (`node_events_0002.sql`) and the transitions trigger's join plan
-- (`node_events_0003.sql`, the last applied) are in place: a database nobody
-- subscribed on has none, one an earlier version subscribed on lacks the
-- later ones.
select exists (
    select 1 from cairnq_migrations where name = 'node_events_0003.sql'
)
