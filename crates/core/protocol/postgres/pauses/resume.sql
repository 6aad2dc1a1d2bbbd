-- Resume $1: the row removed, none when it was not paused.
delete from cairnq_queue_pauses where queue = $1::text
returning paused_at_ms
