-- Whether the follow-ups table exists in the connection's schema (a database
-- may never have had one).
select to_regclass('cairnq_followups') is not null
