-- Whether the steps table exists in the connection's schema (a database may
-- never have run a step).
select to_regclass('cairnq_steps') is not null
