//! Restart from a step (docs/api.md, "Restart from a step"):
//! `retry(id, { fromStep })` drops the stored step `fromStep` and every step
//! stored after it, then requeues the task as retry does, in one
//! transaction decided here once for both dialects: each dialect's
//! `steps.rs` answers `RestartTransaction` by running its statements.

use crate::error::{Error, Result};
use crate::input::name_field;
use crate::store::backend_values::Target;
use crate::task::{Status, Task};

/// `fromStep` as given: a step id.
pub fn from_step(v: &str) -> Result<()> {
    name_field("fromStep", v)
}

/// Where the restart of `task_id` from `step_id` stands, given the task's
/// status and the stored-at time of the step (`None`: no such step) read in
/// its transaction: `Ok(None)` for no task (as retry answers), the step's
/// stored-at time to drop from, or a refusal naming `fromStep` (nothing
/// changes). A task still queued or running would race its own run.
pub fn restart_point(
    task_id: &str,
    step_id: &str,
    found: Option<(Status, Option<i64>)>,
) -> Result<Option<i64>> {
    let Some((status, stored_at)) = found else {
        return Ok(None);
    };
    if !matches!(
        status,
        Status::Failed | Status::Canceled | Status::Succeeded
    ) {
        return Err(Error::Invalid(format!(
            "fromStep: task {task_id} is {}; only a failed, canceled or succeeded task restarts from a step",
            status.as_str()
        )));
    }
    stored_at.map(Some).ok_or_else(|| {
        Error::Invalid(format!(
            "fromStep: task {task_id} has no stored step {}",
            serde_json::to_string(step_id).expect("a string encodes")
        ))
    })
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_finished_task_with_that_step_restarts() {
        assert_eq!(restart_point("t", "b", None).unwrap(), None);
        for status in [Status::Failed, Status::Canceled, Status::Succeeded] {
            assert_eq!(
                restart_point("t", "b", Some((status, Some(7)))).unwrap(),
                Some(7)
            );
        }
        assert_eq!(
            restart_point("t", "b", Some((Status::Running, Some(7))))
                .unwrap_err()
                .to_string(),
            "fromStep: task t is running; only a failed, canceled or succeeded task restarts from a step"
        );
        assert_eq!(
            restart_point("t", "zz", Some((Status::Failed, None)))
                .unwrap_err()
                .to_string(),
            "fromStep: task t has no stored step \"zz\""
        );
        assert_eq!(
            from_step("").unwrap_err().to_string(),
            "fromStep must be a non-empty string, got \"\""
        );
    }
}
