-- Whether the follow-ups table exists (a database may never have had one).
select exists (
    select 1 from sqlite_master where type = 'table' and name = 'cairnq_followups'
)
