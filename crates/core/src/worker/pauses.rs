//! A worker's view of the paused queues (docs/api.md, "Queue pauses"): read
//! again at most every `REFRESH`, and at once after a pause or resume through
//! this process's store, so no claim pays a statement for it and a pause or
//! resume anywhere reaches every worker within about `REFRESH`.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::store::Store;

/// How long a snapshot of the pauses stands. Four reads a second of a tiny
/// table (or, on a database that never paused, of the catalog) per worker.
pub(crate) const REFRESH: Duration = Duration::from_millis(250);

#[derive(Default)]
pub(crate) struct PauseView {
    snapshot: Mutex<Snapshot>,
}

#[derive(Default)]
struct Snapshot {
    paused: HashSet<String>,
    /// When it was read; `None` before the first read.
    at: Option<Instant>,
    /// The store's pause generation it was read at.
    generation: u64,
}

impl PauseView {
    /// The worker's `queues` that are not paused, in order; the pauses are
    /// read first when the snapshot is stale.
    pub async fn open_queues(&self, store: &Store, queues: &[String]) -> Result<Vec<String>> {
        let generation = store.pause_presence().generation();
        let stale = {
            let snapshot = self.snapshot();
            snapshot.generation != generation
                || snapshot.at.is_none_or(|at| at.elapsed() >= REFRESH)
        };
        if stale {
            let paused = store.paused_queues().await?;
            *self.snapshot() = Snapshot {
                paused: paused.into_iter().map(|p| p.queue).collect(),
                at: Some(Instant::now()),
                generation,
            };
        }
        let snapshot = self.snapshot();
        Ok(queues
            .iter()
            .filter(|queue| !snapshot.paused.contains(*queue))
            .cloned()
            .collect())
    }

    /// The idle sleep's bound: with one of `queues` paused, the next
    /// refresh, so a resume elsewhere is seen as fast as a pause.
    pub fn sleep_bound(&self, queues: &[String], every: Duration) -> Duration {
        let snapshot = self.snapshot();
        if queues.iter().any(|queue| snapshot.paused.contains(queue)) {
            every.min(REFRESH)
        } else {
            every
        }
    }

    fn snapshot(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        self.snapshot.lock().expect("pause snapshot")
    }
}
