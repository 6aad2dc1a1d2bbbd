//! The dead letter a failure writes (docs/api.md, "Dead letters"), decided
//! once for both dialects: each runs it in the transaction of the failure
//! (`finish`) or of the lease recovery that failed the task, and inserts
//! what this answers.

use super::{letter_metadata, Route};
use crate::ids::new_task_id;
use crate::store::backend_values::{ClaimPlan, NewTask};
use crate::task::{Status, Task};

/// The letters of `failed`, the rows lease recovery just failed for good in
/// a poll planned by `plan`: each routed by its submit, else by the poller's
/// registration of its name.
pub fn recovered_letters(failed: &[Task], plan: &dyn ClaimPlan) -> Vec<NewTask> {
    failed
        .iter()
        .filter_map(|row| letter_of(row, &Route::of_task(row, plan.dead_letter_of(&row.name))))
        .collect()
}

/// The letter of `row`, just written by a failure routed by `route`: none
/// unless it failed for good (a retry, a cancel or a lost lease writes none)
/// and the route names a queue.
pub fn letter_of(row: &Task, route: &Route) -> Option<NewTask> {
    if row.status != Status::Failed {
        return None;
    }
    let queue = route.queue_of(row)?;
    Some(NewTask {
        id: new_task_id(),
        name: row.name.clone(),
        queue,
        payload: row.payload.clone(),
        metadata: letter_metadata(row),
        max_attempts: row.max_attempts,
        priority: row.priority,
        delay_ms: 0,
        parent_id: None,
        root_id: row.root_id.clone(),
        correlation_id: row.correlation_id.clone(),
    })
}
