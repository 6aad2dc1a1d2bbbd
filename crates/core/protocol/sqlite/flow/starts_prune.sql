-- Starts of a budget that no window reaches any more. :name, :shared_key,
-- :since.
delete from cairnq_flow_starts
where name = :name and shared_key = :shared_key and started_at_ms <= :since
