-- The status of the task a signal is for, or of the task waiting for one,
-- locked for the transaction: a sender and the waiter take the row in turn,
-- so a signal committed first is seen by the wait, and a wait committed first
-- by the signal's wake.
-- $1 id.
select status from cairnq_tasks where id = $1::text for update
