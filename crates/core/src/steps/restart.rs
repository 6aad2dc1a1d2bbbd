//! Restart from a step (docs/api.md, "Restart from a step"):
//! `retry(id, { fromStep })` drops the stored step `fromStep` and every step
//! stored after it, then requeues the task as retry does. What may restart
//! is decided here; `store::steps::restart` runs it in one transaction.

use crate::error::{Error, Result};
use crate::input::name_field;
use crate::task::Status;

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
