//! A restart from a step's transaction (docs/api.md, "Restart from a
//! step"), decided once for both dialects: each dialect's `steps.rs` answers
//! `RestartTransaction` by running its statements, and `restart` decides
//! what runs next (`steps::restart`), all in one transaction.

use crate::error::Result;
use crate::steps::restart::restart_point;
use crate::store::backend_values::Target;
use crate::task::{Status, Task};

// Not `Send`-bound, as `StepTransaction`: SQLite drives it on its writer.
#[allow(async_fn_in_trait)]
pub trait RestartTransaction {
    /// The id of the task `key` points at, the key resolved as retry does.
    async fn key_task(&mut self, key: &str) -> Result<Option<String>>;
    /// The task's status and the stored-at time of `step_id` (`None`: no
    /// such step); `None`: no such task. Postgres locks the task's row.
    async fn restart_target(
        &mut self,
        task_id: &str,
        step_id: &str,
    ) -> Result<Option<(Status, Option<i64>)>>;
    /// Delete `step_id`, stored at `created_at_ms`, and the steps after it.
    async fn drop_steps_from(
        &mut self,
        task_id: &str,
        step_id: &str,
        created_at_ms: i64,
    ) -> Result<()>;
    /// Requeue the finished task as retry does, its result cleared.
    async fn requeue(&mut self, task_id: &str, reset_attempt: bool) -> Result<Option<Task>>;
}

/// `retry(target, { fromStep: step_id })`: the task requeued with its steps
/// from `step_id` on dropped; `None` for no task; refused (nothing changed)
/// for a task not finished or a step it has not stored.
pub async fn restart_from_step<T: RestartTransaction>(
    tx: &mut T,
    target: &Target,
    step_id: &str,
    reset_attempt: bool,
) -> Result<Option<Task>> {
    let task_id = match target {
        Target::Id(id) => Some(id.clone()),
        Target::Key(key) => tx.key_task(key).await?,
    };
    let Some(task_id) = task_id else {
        return Ok(None);
    };
    let found = tx.restart_target(&task_id, step_id).await?;
    let Some(created_at_ms) = restart_point(&task_id, step_id, found)? else {
        return Ok(None);
    };
    tx.drop_steps_from(&task_id, step_id, created_at_ms).await?;
    tx.requeue(&task_id, reset_attempt).await
}
