-- After firing: move each schedule's pending occurrence on, unless another
-- worker already did (its pending occurrence is no longer `expected`). A REAL
-- another program stored is compared as the core read it: truncated.
-- ?1 a JSON array of {name, expected, next, last}, ?2 now.
update cairnq_schedules set
    next_run_at_ms = a.next,
    last_run_at_ms = coalesce(a.last, cairnq_schedules.last_run_at_ms),
    updated_at_ms = ?2
from (
    select
        json_extract(value, '$.name') as name,
        json_extract(value, '$.expected') as expected,
        json_extract(value, '$.next') as next,
        json_extract(value, '$.last') as last
    from json_each(?1)
) as a
where cairnq_schedules.name = a.name
    and cast(cairnq_schedules.next_run_at_ms as integer) = a.expected
returning *
