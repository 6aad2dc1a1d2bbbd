-- After firing: move each schedule's pending occurrence on, unless another
-- worker already did (its pending occurrence is no longer `expected`), and
-- count the occurrences fired and skipped.
-- $1 a JSON array of {name, expected, next, last, fired, skipped}, $2 now.
update cairnq_schedules as s set
    next_run_at_ms = a.next,
    last_run_at_ms = coalesce(a.last, s.last_run_at_ms),
    fired_count = s.fired_count + coalesce(a.fired, 0),
    skipped_count = s.skipped_count + coalesce(a.skipped, 0),
    last_skipped_at_ms = case when a.skipped > 0 then $2::bigint else s.last_skipped_at_ms end,
    updated_at_ms = $2::bigint
from jsonb_to_recordset($1::text::jsonb)
    as a(name text, expected bigint, next bigint, last bigint, fired bigint, skipped bigint)
where s.name = a.name and s.next_run_at_ms = a.expected
returning s.*
