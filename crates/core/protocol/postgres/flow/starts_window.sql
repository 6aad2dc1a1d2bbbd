-- The starts of a name after $2, per group ('' = the name as a whole, or the
-- tasks without a group): how many, and the oldest. Starts no window reaches
-- any more go first (rows another transaction is deleting are left to it);
-- the count reads past them anyway. $1 name, $2 since.
with pruned as (
    delete from cairnq_flow_starts
    where ctid in (
        select ctid from cairnq_flow_starts
        where name = $1::text and started_at_ms <= $2::bigint
        for update skip locked
    )
)
select grp, count(*), min(started_at_ms)
from cairnq_flow_starts
where name = $1::text and started_at_ms > $2::bigint
group by grp
