-- Run before `purge`, in its transaction: the batch must come from walking a
-- completion-ordered index and stopping at the limit. When the planner's
-- statistics predate a burst of finishing (autovacuum has not analyzed since),
-- it estimates fewer finished rows than the limit and instead reads every
-- finished row and sorts them: 20,000 rows for a batch of 1,000. Every purge
-- shape has such an index (completed_idx, queue_completed_idx,
-- status_completed_idx), so ruling sorts out only ever picks the walk.
set local enable_sort = off
