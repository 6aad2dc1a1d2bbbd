//! The flow-control seam (docs/protocol.md, "Flow control tables"): what a
//! dialect runs for it outside a claim, in its `flow.rs`; one of `Backend`'s
//! supertraits.

use async_trait::async_trait;

use super::{Declaration, Replaced};
use crate::error::Result;
use crate::steps::rows::Suspended;
use crate::store::backend_values::HeldTask;

/// Flow control's declarations (docs/protocol.md, "Flow control tables");
/// its draws run in the claim transaction (`Draw::flow`).
#[async_trait]
pub trait FlowBackend: Send + Sync {
    /// Create the flow-control tables unless the ledger records them (as
    /// `install_schedules` does), then store each declaration of
    /// `worker_id` that differs from the stored one: the latest wins. Answers
    /// the stored declarations replaced.
    async fn declare_flow(
        &self,
        worker_id: String,
        declarations: Vec<Declaration>,
    ) -> Result<Vec<Replaced>>;
    /// `ctx.retryAfter(ms, { limit: true })`, in one transaction: fill the
    /// window of the budget the held task's name draws from (per its group
    /// under a per-group rate) so that nothing drawing from it starts before
    /// `ms` from now, then suspend the task until then.
    async fn push_back(&self, owned: HeldTask, ms: i64) -> Result<Suspended>;
}
