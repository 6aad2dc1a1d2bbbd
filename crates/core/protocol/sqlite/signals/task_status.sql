-- The status of the task a signal is for, or of the task waiting for one,
-- read inside the write transaction (the write lock serializes a sender and
-- the waiter).
select status from cairnq_tasks where id = :id
