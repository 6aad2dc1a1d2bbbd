-- Whether the schedules table exists (a database may never have used schedules).
select exists (
    select 1 from sqlite_master where type = 'table' and name = 'cairnq_schedules'
)
