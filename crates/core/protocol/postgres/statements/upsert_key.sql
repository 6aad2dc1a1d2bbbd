-- Point the key at a task: create the pointer, or repoint it keeping its creation time.
-- $1 key, $2 task_id.
insert into cairnq_task_keys (key, task_id, created_at_ms, updated_at_ms)
select $1::text, $2::text, clock.ms, clock.ms
from (select (extract(epoch from now()) * 1000)::bigint as ms) as clock
on conflict (key) do update set task_id = excluded.task_id, updated_at_ms = excluded.updated_at_ms
