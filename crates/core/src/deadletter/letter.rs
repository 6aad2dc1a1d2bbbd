//! The dead letter a failure writes (docs/api.md, "Dead letters"), decided
//! once for both dialects: each runs it in the transaction of the failure
//! (`finish`) or of the lease recovery that failed the task, and inserts
//! what this answers.

use super::{letter_metadata, Route};
use crate::ids::new_task_id;
use crate::store::backend_values::NewTask;
use crate::task::{Status, Task};

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
