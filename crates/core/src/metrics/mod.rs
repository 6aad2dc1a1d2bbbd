//! Prometheus metrics (docs/api.md, "Metrics"): what `/metrics` on the
//! dashboard and `cairnq metrics` print, read from the database (counts per
//! queue and status, the oldest due task's age, the paused queues) and from the workers of this
//! process that were handed over (queue waits and run times per task name).

pub mod histogram;
mod prometheus;
mod snapshot;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use self::snapshot::FINISHED;
use crate::error::Result;
use crate::store::{Stats, Store};
use crate::worker::{merge_timings, Timings, Worker};

pub use self::prometheus::render;
pub use self::snapshot::Snapshot;

/// Reads snapshots of one store (and the workers added) and renders them.
/// Keeps the finished counters between readings: each reading adds what the
/// terminal counts grew by since the one before (a purge or a retry, which
/// shrink them, adds nothing), so the counters only ever rise.
pub struct Exporter {
    store: Arc<Store>,
    workers: Mutex<Vec<Worker>>,
    finished: Mutex<Finished>,
}

#[derive(Default)]
struct Finished {
    last: Option<Stats>,
    totals: BTreeMap<String, [u64; 3]>,
}

impl Finished {
    fn observe(&mut self, stats: &Stats) -> BTreeMap<String, [u64; 3]> {
        for (queue, counts) in stats {
            let totals = self.totals.entry(queue.clone()).or_default();
            let before = self.last.as_ref().and_then(|last| last.get(queue));
            for (total, status) in totals.iter_mut().zip(FINISHED) {
                let now = counts[status as usize];
                // A queue first seen after the first reading: its tasks all arrived since.
                let was = before.map_or(if self.last.is_some() { 0 } else { now }, |b| {
                    b[status as usize]
                });
                *total += (now - was).max(0) as u64;
            }
        }
        self.last = Some(stats.clone());
        self.totals.clone()
    }
}

impl Exporter {
    pub fn new(store: Arc<Store>) -> Exporter {
        Exporter {
            store,
            workers: Mutex::new(Vec::new()),
            finished: Mutex::new(Finished::default()),
        }
    }

    /// Show `worker`'s timings too (summed with the other workers', name by name).
    pub fn add_worker(&self, worker: Worker) {
        self.workers.lock().expect("workers").push(worker);
    }

    pub async fn snapshot(&self) -> Result<Snapshot> {
        let mut stats = self.store.stats(None).await?;
        let oldest_due_ms = self.store.oldest_due().await?;
        let finished = self.finished.lock().expect("finished").observe(&stats);
        let mut paused = std::collections::BTreeSet::new();
        for pause in self.store.paused_queues().await? {
            stats.entry(pause.queue.clone()).or_insert([0; 5]);
            paused.insert(pause.queue);
        }
        let mut timings = Timings::new();
        for worker in self.workers.lock().expect("workers").iter() {
            merge_timings(&mut timings, &worker.timings());
        }
        let events = self.store.event_counters();
        Ok(Snapshot {
            stats,
            oldest_due_ms,
            finished,
            paused,
            timings,
            events_delivered: events.delivered(),
            event_listeners: events.listeners(),
        })
    }

    /// The Prometheus text exposition of a fresh snapshot.
    pub async fn render(&self) -> Result<String> {
        Ok(render(&self.snapshot().await?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(rows: &[(&str, [i64; 5])]) -> Stats {
        rows.iter().map(|(q, c)| (q.to_string(), *c)).collect()
    }

    #[test]
    fn finished_counters_add_growth_only() {
        let mut finished = Finished::default();
        // The first reading is the baseline.
        let first = finished.observe(&stats(&[("a", [1, 0, 5, 2, 0])]));
        assert_eq!(first["a"], [0, 0, 0]);
        // Growth counts; a shrink (purge, retry) adds nothing.
        let second = finished.observe(&stats(&[("a", [0, 0, 8, 1, 1])]));
        assert_eq!(second["a"], [3, 0, 1]);
        // A queue first seen later: all its finished tasks are new.
        let third = finished.observe(&stats(&[("a", [0, 0, 8, 2, 1]), ("b", [0, 0, 2, 0, 0])]));
        assert_eq!(third["a"], [3, 1, 1]);
        assert_eq!(third["b"], [2, 0, 0]);
    }
}
