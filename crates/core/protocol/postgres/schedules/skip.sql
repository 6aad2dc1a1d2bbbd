-- An occurrence of an `overlap: "skip"` schedule skipped, in one statement:
-- the pending occurrence moves on and the skip is counted only if it is still
-- `expected` and a task of the schedule (an occurrence's or a trigger's)
-- other than the occurrence's own is queued or running, found through the
-- claim index by queue, status and task name. No row answered: fire it.
-- $1 name, $2 expected, $3 next, $4 occurrences skipped, $5 now, $6 queue,
-- $7 task name, $8 the occurrence that would fire.
update cairnq_schedules set
    next_run_at_ms = $3::bigint,
    skipped_count = skipped_count + $4::bigint,
    last_skipped_at_ms = $5::bigint,
    updated_at_ms = $5::bigint
where name = $1::text and next_run_at_ms = $2::bigint
    and exists (
        select 1 from cairnq_tasks
        where queue = $6::text and status in ('queued', 'running') and name = $7::text
            and metadata -> 'cairnq.schedule' ->> 'name' = $1::text
            and not (
                metadata -> 'cairnq.schedule' ->> 'occurrenceAtMs' = $8::bigint::text
                and metadata -> 'cairnq.schedule' -> 'triggered' is null
            )
    )
returning *
