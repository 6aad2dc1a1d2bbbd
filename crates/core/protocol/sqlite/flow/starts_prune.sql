-- Starts of a name that no window reaches any more. :name, :since.
delete from cairnq_flow_starts
where name = :name and started_at_ms <= :since
