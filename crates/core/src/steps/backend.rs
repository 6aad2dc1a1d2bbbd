//! The steps seam (docs/protocol.md, "Durable steps"): what a dialect runs
//! for them, in its `steps.rs`; one of `Backend`'s supertraits.

use async_trait::async_trait;

use super::rows::{ChildWait, NewStep, StepSummary, StoredStep, Suspended, Wake};
use crate::error::Result;
use crate::store::backend_values::{HeldTask, Target};
use crate::task::Task;

/// The steps statements of one dialect (docs/protocol.md, "Durable steps").
/// Writes carry the ownership check; a lost lease is `LostLease` and writes
/// nothing.
#[async_trait]
pub trait StepBackend: Send + Sync {
    /// Whether `cairnq_steps` exists (a catalog read).
    async fn steps_installed(&self) -> Result<bool>;
    /// Create `cairnq_steps` unless the ledger records it, as a migration is
    /// applied (ledger lock, then the ledger row): on first use only.
    async fn install_steps(&self) -> Result<()>;
    /// Every step of a task, children's states joined.
    async fn load_steps(&self, task_id: String) -> Result<Vec<StoredStep>>;
    async fn step_summaries(&self, task_id: String) -> Result<Vec<StepSummary>>;
    /// Store `step` of the task `owned` holds; its stored-at time.
    async fn record_step(&self, owned: HeldTask, step: NewStep) -> Result<i64>;
    /// In one transaction: store `step` (when given), then send the task
    /// back to the queue until `wake` without using an attempt.
    async fn suspend(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        wake: Wake,
    ) -> Result<Suspended>;
    /// In one transaction: store `step` (when given), read the child (no
    /// completion of it can slip between the read and the suspension), and
    /// unless it has finished, suspend the task for `recheck_ms`.
    async fn wait_for_child(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        child_id: String,
        recheck_ms: i64,
    ) -> Result<ChildWait>;
    /// Make the tasks waiting on any of these finished children due now.
    async fn wake_parents(&self, child_ids: Vec<String>) -> Result<()>;
    /// In one transaction: cancel the unfinished children the task's child
    /// steps submitted, and theirs, at any depth; the rows canceled.
    async fn cancel_children(&self, task_id: String) -> Result<Vec<Task>>;
    /// In one transaction (`steps::restart`): drop the task's steps from
    /// `step_id` on and requeue it; `None` for no task.
    async fn restart_from_step(
        &self,
        target: Target,
        step_id: String,
        reset_attempt: bool,
    ) -> Result<Option<Task>>;
}
