-- Whether the schedules table has its controls (`node_schedules_0002.sql`):
-- an earlier version may have created the table without them.
select exists (
    select 1 from cairnq_migrations where name = 'node_schedules_0002.sql'
)
