-- Older SDKs left leases on finished rows; the lease invariant says only running rows carry one.
update cairnq_tasks set lease_until_ms = null
where status <> 'running' and lease_until_ms is not null;
update cairnq_meta set value = '5' where key = 'schema_version';
