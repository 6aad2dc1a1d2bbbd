//! The events seam (docs/protocol.md, "Events"): what a dialect runs for
//! them, in its `events.rs`; one of `Backend`'s supertraits.

use std::time::Duration;

use async_trait::async_trait;

use super::rows::{EventFilter, Position, RawPage};
use crate::error::Result;

/// The events statements of one dialect (docs/protocol.md, "Events"): the
/// rows themselves are written by the database's triggers, in the writers'
/// own transactions; these only read and sweep them.
#[async_trait]
pub trait EventBackend: Send + Sync {
    /// Whether the events table exists (a catalog read).
    async fn events_installed(&self) -> Result<bool>;
    /// Create the events tables and triggers unless the ledger records them,
    /// as a migration is applied: on first use only.
    async fn install_events(&self) -> Result<()>;
    /// The final events after `after` that pass `filter`, at most `limit`,
    /// with the newest final position and the retention horizon, all of one
    /// consistent read.
    async fn events_page(
        &self,
        after: Position,
        filter: EventFilter,
        limit: i64,
    ) -> Result<RawPage>;
    /// Delete the events older than `cutoff_ms` and all but the newest
    /// `keep`, in one transaction (`sweep_cut`), recording the horizon.
    async fn sweep_events(&self, cutoff_ms: i64, keep: i64) -> Result<()>;
    /// A mark of the changes seen so far, for `events_changed`.
    fn events_ticket(&self) -> u64;
    /// Resolves early when events may have been committed after ticket
    /// `since`; after `timeout` at the latest.
    async fn events_changed(&self, since: u64, timeout: Duration);
}
