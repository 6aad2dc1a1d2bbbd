-- Hold a new follow-up back until the task it follows has ended; then it
-- starts `debounce_ms` after this submit, or at once if that has passed.
-- $1 task_id, $2 after_id, $3 debounce_ms. clock_timestamp(), as insert_task.
insert into cairnq_followups (task_id, after_id, run_at_ms, created_at_ms)
select $1::text, $2::text, clock.ms + $3::bigint, clock.ms
from (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms) as clock
