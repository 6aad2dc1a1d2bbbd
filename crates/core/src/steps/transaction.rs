//! A suspension's, a child wait's and a cascading cancel's transaction,
//! decided once for both dialects: each dialect's `steps.rs` answers the
//! steps of `StepTransaction` by running its statements (SQLite on the
//! writer's connection, its futures ready at their first poll; Postgres over
//! its transport), and the functions here decide what runs next.

use super::rows::{ChildState, ChildWait, NewStep, Suspended, Wake};
use crate::error::Result;
use crate::store::backend_values::HeldTask;
use crate::task::Task;

// Not `Send`-bound: SQLite's connection is not `Sync`, and the core drives
// its futures on the writer's thread without a runtime.
#[allow(async_fn_in_trait)]
pub trait StepTransaction {
    /// Store `step` of a task the worker still holds: its stored-at time, or
    /// `LostLease` (nothing stored).
    async fn record(&mut self, owned: &HeldTask, step: &NewStep) -> Result<i64>;
    /// Queue the held task again until `wake`, its attempt given back: how
    /// that left it, or `LostLease` (nothing changed).
    async fn suspend_task(&mut self, owned: &HeldTask, wake: Wake) -> Result<Suspended>;
    /// The child's status, result and error; `None`: no such task. Postgres
    /// reads it `FOR SHARE`, so a completion of the child under way is
    /// waited for and read; SQLite's write lock lets none slip in.
    async fn child_state(&mut self, child_id: &str) -> Result<Option<ChildState>>;
    /// The ids of the task's `callChild` children that have not finished.
    async fn live_children(&mut self, task_id: &str) -> Result<Vec<String>>;
    /// The protocol's cancel of one task.
    async fn cancel(&mut self, task_id: &str) -> Result<Option<Task>>;
}

/// `ctx.sleep`, a signal wait's suspension, `retryAfter`: the step (when
/// given), then the task queued until `wake`. Both read one clock, so a
/// sleep's stored wake time is the time its task is due.
pub async fn suspend<T: StepTransaction>(
    tx: &mut T,
    owned: &HeldTask,
    step: Option<&NewStep>,
    wake: Wake,
) -> Result<Suspended> {
    if let Some(step) = step {
        tx.record(owned, step).await?;
    }
    tx.suspend_task(owned, wake).await
}

/// `ctx.callChild`'s wait: the step (when given), the child's state, and
/// unless the child has finished, the task queued to check it again after
/// `recheck_ms`.
pub async fn wait_for_child<T: StepTransaction>(
    tx: &mut T,
    owned: &HeldTask,
    step: Option<&NewStep>,
    child_id: &str,
    recheck_ms: i64,
) -> Result<ChildWait> {
    if let Some(step) = step {
        tx.record(owned, step).await?;
    }
    match tx.child_state(child_id).await? {
        None => Ok(ChildWait::Gone),
        Some(child) if child.status.is_terminal() => Ok(ChildWait::Finished(child)),
        Some(_) => tx
            .suspend_task(owned, Wake::After(recheck_ms))
            .await
            .map(ChildWait::Suspended),
    }
}

/// A cancel's cascade: every live `callChild` child of the task, canceled.
pub async fn cancel_children<T: StepTransaction>(tx: &mut T, task_id: &str) -> Result<Vec<Task>> {
    let ids = tx.live_children(task_id).await?;
    let mut canceled = Vec::with_capacity(ids.len());
    for id in ids {
        canceled.extend(tx.cancel(&id).await?);
    }
    Ok(canceled)
}
