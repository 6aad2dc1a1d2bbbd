//! The debounce follow-ups seam (docs/protocol.md, "Debounced submit"): what
//! a dialect runs to release them, in its `followups.rs`; one of `Backend`'s
//! supertraits.

use async_trait::async_trait;

use crate::error::Result;

/// The release of debounce follow-ups (docs/protocol.md, "Debounced
/// submit"); a follow-up is held back inside its keyed submit.
#[async_trait]
pub trait FollowupBackend: Send + Sync {
    /// Whether `cairnq_followups` exists.
    async fn followups_installed(&self) -> Result<bool>;
    /// Make the held-back follow-ups whose task has ended due, in one
    /// transaction; how many. The table must exist.
    async fn release_followups(&self) -> Result<u64>;
}
