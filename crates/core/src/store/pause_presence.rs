//! What a store knows of the queue pauses table, and this process's own
//! pauses and resumes (docs/api.md, "Queue pauses"), which its workers read
//! at once instead of at their next refresh.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

use tokio::sync::Notify;

/// Once seen, the table stays (nothing drops it); not seen, it is looked for
/// again by each read.
#[derive(Default)]
pub struct PausePresence {
    installed: AtomicBool,
    /// Bumped by each pause or resume through this store.
    generation: AtomicU64,
    /// Told of each of them: ends this process's workers' idle sleeps.
    changes: Notify,
}

impl PausePresence {
    pub fn seen(&self) -> bool {
        self.installed.load(SeqCst)
    }

    pub fn mark_seen(&self) {
        self.installed.store(true, SeqCst)
    }

    /// A mark of this process's changes so far.
    pub fn generation(&self) -> u64 {
        self.generation.load(SeqCst)
    }

    /// This process paused or resumed a queue (committed).
    pub fn changed(&self) {
        self.generation.fetch_add(1, SeqCst);
        self.changes.notify_waiters();
    }

    pub fn changes(&self) -> &Notify {
        &self.changes
    }
}
