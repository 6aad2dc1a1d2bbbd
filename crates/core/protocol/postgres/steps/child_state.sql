-- A child's state as its waiting parent decides on it, read inside the
-- parent's suspension. FOR SHARE waits for a completion of the child that is
-- under way and reads what it committed; a completion that comes later finds
-- the parent queued already, and wakes it.
-- $1 child_id.
select status, result::text, error::text from cairnq_tasks where id = $1::text for share
