-- Point the key at a task: create the pointer, or repoint it keeping its creation time.
insert into cairnq_task_keys (key, task_id, created_at_ms, updated_at_ms)
values (:key, :task_id, :now, :now)
on conflict (key) do update set task_id = excluded.task_id, updated_at_ms = excluded.updated_at_ms
