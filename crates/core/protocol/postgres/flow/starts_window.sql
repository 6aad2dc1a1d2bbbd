-- The starts of a budget (a task name's own, or a key's: $2) after $3, per
-- group ('' = the budget as a whole, or the tasks without a group): how
-- many, and the oldest. Starts no window reaches any more go first (rows
-- another transaction is deleting are left to it); the count reads past them
-- anyway. $1 name.
with pruned as (
    delete from cairnq_flow_starts
    where ctid in (
        select ctid from cairnq_flow_starts
        where name = $1::text and shared_key = $2::bigint and started_at_ms <= $3::bigint
        for update skip locked
    )
)
select grp, count(*), min(started_at_ms)
from cairnq_flow_starts
where name = $1::text and shared_key = $2::bigint and started_at_ms > $3::bigint
group by grp
