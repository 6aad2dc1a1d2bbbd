-- Whether the signals tables exist in the connection's schema (a database
-- may never have had a signal).
select to_regclass('cairnq_signal_waits') is not null
