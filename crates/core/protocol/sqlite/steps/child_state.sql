-- A child's state as its waiting parent decides on it, read inside the
-- parent's suspension (under the write lock, so no completion slips between).
select status, result, error from cairnq_tasks where id = :child_id
