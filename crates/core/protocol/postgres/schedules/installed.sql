-- Whether the schedules table exists in the connection's schema (a database
-- may never have used schedules).
select to_regclass('cairnq_schedules') is not null
