//! One reading of everything the metrics show.

use std::collections::{BTreeMap, BTreeSet};

use crate::store::Stats;
use crate::task::Status;
use crate::worker::Timings;

/// The statuses whose arrivals `cairnq_tasks_finished_total` counts.
pub(crate) const FINISHED: [Status; 3] = [Status::Succeeded, Status::Failed, Status::Canceled];

/// One reading of everything the metrics show.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub stats: Stats,
    /// Queue → ms its longest-waiting due task has been due (absent: none due).
    pub oldest_due_ms: BTreeMap<String, i64>,
    /// Queue → tasks seen reaching each of `FINISHED` since the exporter began.
    pub finished: BTreeMap<String, [u64; 3]>,
    /// The paused queues (each also in `stats`, with zero counts when it
    /// has no task).
    pub paused: BTreeSet<String>,
    pub timings: Timings,
    /// Events this process's subscriptions on the store handed out so far.
    pub events_delivered: u64,
    /// Subscriptions open on the store now.
    pub event_listeners: u64,
}
