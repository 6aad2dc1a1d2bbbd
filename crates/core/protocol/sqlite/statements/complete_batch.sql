-- complete.sql for many tasks of one worker in one statement (the worker's
-- finished calls), with the same per-row rule: a requested cancel wins and
-- drops the result. :items is a JSON array of [id, result] pairs, result being
-- the result's JSON text or null. Returns the ids it finished; a missing id's
-- lease was lost. The unary `+` keeps the planner from driving the update off
-- the status or lease indexes: the id lookup per item is the cheap plan.
update cairnq_tasks set
    status = case when cancel_requested_at_ms is not null then 'canceled' else 'succeeded' end,
    result = case when cancel_requested_at_ms is not null then result else item.item_result end,
    progress = case when cancel_requested_at_ms is not null then progress else 1.0 end,
    lease_until_ms = null,
    completed_at_ms = :now,
    updated_at_ms = :now
from (select value ->> 0 as item_id, value ->> 1 as item_result from json_each(:items)) as item
where cairnq_tasks.id = item.item_id
  and +status = 'running' and +worker_id = :worker_id and +lease_until_ms > :now
returning cairnq_tasks.id
