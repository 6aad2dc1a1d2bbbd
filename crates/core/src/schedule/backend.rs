//! The schedules seam (docs/protocol.md, "Schedules"): what a dialect runs
//! for them, in its `schedules.rs`; one of `Backend`'s supertraits.

use async_trait::async_trait;

use super::rows::{PickStatement, ScheduleRows, SqlArg};
use crate::error::Result;

/// The schedules statements of one dialect (docs/protocol.md, "Schedules"):
/// `schedule/` decides which one runs, with what.
#[async_trait]
pub trait ScheduleBackend: Send + Sync {
    /// Whether `cairnq_schedules` exists.
    async fn schedules_installed(&self) -> Result<bool>;
    /// Whether the ledger records the table's controls
    /// (`node_schedules_0002.sql`).
    async fn schedule_controls_installed(&self) -> Result<bool>;
    /// Create `cairnq_schedules` and its controls unless the ledger records
    /// them, as a migration is applied (ledger lock, then the ledger row): on
    /// first use only.
    async fn install_schedules(&self) -> Result<()>;
    /// Run the picked schedules statement that only reads; its rows.
    async fn schedule_read(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows>;
    /// Run the picked schedules statement that writes, autocommit; its rows.
    async fn schedule_write(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows>;
}
