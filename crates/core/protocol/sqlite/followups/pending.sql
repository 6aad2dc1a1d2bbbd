-- Whether any follow-up is held back: read before `release.sql`, so a tick
-- with none takes no write lock.
select exists (select 1 from cairnq_followups)
