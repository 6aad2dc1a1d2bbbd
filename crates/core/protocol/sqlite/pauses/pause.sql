-- Pause :queue unless it is paused already: the row, when this pause wrote it.
insert into cairnq_queue_pauses (queue, paused_at_ms)
values (:queue, :now)
on conflict (queue) do nothing
returning paused_at_ms
