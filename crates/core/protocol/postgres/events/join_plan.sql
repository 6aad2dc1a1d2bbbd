-- The transitions trigger's join plan (ledger `node_events_0003.sql`, after
-- `node_events_0002.sql`): plpgsql plans the join of the old and new
-- transition tables once, estimating one row each, and keeps that plan, a
-- nested loop, for every later statement: quadratic in the rows an update
-- changes (a completion batch of 3,232 rows spent 1.6 s in it). Without
-- nested loops the join is hashed, linear however many rows change.
alter function cairnq_events_transitions() set enable_nestloop = off;
