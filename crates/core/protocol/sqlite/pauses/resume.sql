-- Resume :queue: the row removed, none when it was not paused.
delete from cairnq_queue_pauses where queue = :queue
returning paused_at_ms
