-- Whether the steps table exists (a database may never have run a step).
select exists (
    select 1 from sqlite_master where type = 'table' and name = 'cairnq_steps'
)
