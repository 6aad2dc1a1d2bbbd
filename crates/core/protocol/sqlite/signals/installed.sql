-- Whether the signals tables exist (a database may never have had a signal).
select exists (
    select 1 from sqlite_master where type = 'table' and name = 'cairnq_signal_waits'
)
