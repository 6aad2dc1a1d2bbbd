-- After firing: move each schedule's pending occurrence on, unless another
-- worker already did (its pending occurrence is no longer `expected`).
-- $1 a JSON array of {name, expected, next, last}, $2 now.
update cairnq_schedules as s set
    next_run_at_ms = a.next,
    last_run_at_ms = coalesce(a.last, s.last_run_at_ms),
    updated_at_ms = $2::bigint
from jsonb_to_recordset($1::text::jsonb) as a(name text, expected bigint, next bigint, last bigint)
where s.name = a.name and s.next_run_at_ms = a.expected
returning s.*
