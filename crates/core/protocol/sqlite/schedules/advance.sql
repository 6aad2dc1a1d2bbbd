-- After firing: move each schedule's pending occurrence on, unless another
-- worker already did (its pending occurrence is no longer `expected`), and
-- count the occurrences fired and skipped. A REAL another program stored is
-- compared as the core read it: truncated.
-- ?1 a JSON array of {name, expected, next, last, fired, skipped}, ?2 now.
update cairnq_schedules set
    next_run_at_ms = a.next,
    last_run_at_ms = coalesce(a.last, cairnq_schedules.last_run_at_ms),
    fired_count = cairnq_schedules.fired_count + coalesce(a.fired, 0),
    skipped_count = cairnq_schedules.skipped_count + coalesce(a.skipped, 0),
    last_skipped_at_ms = case
        when a.skipped > 0 then ?2 else cairnq_schedules.last_skipped_at_ms
    end,
    updated_at_ms = ?2
from (
    select
        json_extract(value, '$.name') as name,
        json_extract(value, '$.expected') as expected,
        json_extract(value, '$.next') as next,
        json_extract(value, '$.last') as last,
        json_extract(value, '$.fired') as fired,
        json_extract(value, '$.skipped') as skipped
    from json_each(?1)
) as a
where cairnq_schedules.name = a.name
    and cast(cairnq_schedules.next_run_at_ms as integer) = a.expected
returning *
