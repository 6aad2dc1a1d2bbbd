//! The queue pauses seam (docs/protocol.md, "Queue pauses"): what a dialect
//! runs for them, in its `pauses.rs`, and what it answers; one of `Backend`'s
//! supertraits.

use async_trait::async_trait;

use crate::error::Result;
/// A paused queue (docs/api.md, "Queue pauses"): its name and when it was paused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PausedQueue {
    pub queue: String,
    pub paused_at_ms: i64,
}

/// The queue pauses statements of one dialect (docs/protocol.md, "Queue
/// pauses"): each one statement, autocommit.
#[async_trait]
pub trait PauseBackend: Send + Sync {
    /// Whether `cairnq_queue_pauses` exists (a catalog read).
    async fn pauses_installed(&self) -> Result<bool>;
    /// Create `cairnq_queue_pauses` unless the ledger records it, as a
    /// migration is applied: on the first pause only.
    async fn install_pauses(&self) -> Result<()>;
    /// Pause `queue` at `now_ms`; whether this call paused it (false: it was
    /// paused already, its row untouched). The table must exist.
    async fn pause_queue(&self, queue: String, now_ms: i64) -> Result<bool>;
    /// Resume `queue`; whether it was paused. The table must exist.
    async fn resume_queue(&self, queue: String) -> Result<bool>;
    /// Every paused queue, by name. The table must exist.
    async fn paused_queues(&self) -> Result<Vec<PausedQueue>>;
}
