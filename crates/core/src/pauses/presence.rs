//! What a store knows of the queue pauses table, and this process's own
//! pauses and resumes (docs/api.md, "Queue pauses"), which every worker of
//! the process reads at once instead of at its next refresh, whichever store
//! (a client's, a worker's) wrote them.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::LazyLock;

use tokio::sync::Notify;

/// Bumped by each pause or resume of this process, on any store.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Told of each of them: ends this process's workers' idle sleeps.
static CHANGES: LazyLock<Notify> = LazyLock::new(Notify::new);

/// Once seen, the table stays (nothing drops it); not seen, it is looked for
/// again by each read.
#[derive(Default)]
pub struct PausePresence {
    installed: AtomicBool,
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
        GENERATION.load(SeqCst)
    }

    /// This process paused or resumed a queue (committed).
    pub fn changed(&self) {
        GENERATION.fetch_add(1, SeqCst);
        CHANGES.notify_waiters();
    }

    pub fn changes(&self) -> &'static Notify {
        &CHANGES
    }
}
