//! Dead letters (docs/api.md, "Dead letters"): `deadLetter: "<queue>"` per
//! registration and per submit. A task that fails for good is submitted to
//! that queue in the transaction that marks it failed, so a crash leaves
//! either both writes or neither: one letter per failure. A submit's queue
//! travels in the task's metadata (`"cairnq.deadLetter"`), which other SDKs'
//! workers ignore; the letter is the same name and payload, its metadata
//! the original's with `"cairnq.deadLettered": {from, error}` instead.
//! `letter` decides the letter, which each dialect inserts in the failure's
//! transaction.

pub mod letter;

use serde_json::{json, Map, Value};

use crate::error::Result;
use crate::input::{metadata_with, name_field};
use crate::task::Task;

/// Where a task's metadata holds the dead-letter queue it was submitted with.
pub const DEAD_LETTER_METADATA_KEY: &str = "cairnq.deadLetter";

/// Where a letter's metadata says what it was: the original and its error.
pub const DEAD_LETTERED_METADATA_KEY: &str = "cairnq.deadLettered";

/// Where a failure for good goes, as the writer of the failure knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Route {
    /// Nowhere: neither the task nor its registration names a queue (a
    /// failure costs nothing more).
    #[default]
    None,
    /// Wherever the failed row's metadata says (a writer that has not read
    /// the task: `store.fail`, a fetched task's `fail`).
    Stored,
    /// To this queue.
    Queue(String),
}

impl Route {
    /// The route of `task` failed by a worker: its submit's queue, else its
    /// registration's.
    pub fn of_task(task: &Task, registration: Option<&str>) -> Route {
        match submitted_queue(task).or_else(|| registration.map(str::to_string)) {
            Some(queue) => Route::Queue(queue),
            None => Route::None,
        }
    }

    /// The queue a row that has just failed for good goes to, if any.
    pub fn queue_of(&self, row: &Task) -> Option<String> {
        match self {
            Route::None => None,
            Route::Stored => submitted_queue(row),
            Route::Queue(queue) => Some(queue.clone()),
        }
    }
}

/// A registration's or a submit's `deadLetter`: a queue name.
pub fn checked_queue(queue: Option<String>) -> Result<Option<String>> {
    if let Some(queue) = &queue {
        name_field("deadLetter", queue)?;
    }
    Ok(queue)
}

/// The metadata to store for a submit with `deadLetter`, or `metadata`
/// unchanged without one.
pub fn routed_metadata(metadata: Option<String>, queue: Option<String>) -> Result<Option<String>> {
    match checked_queue(queue)? {
        None => Ok(metadata),
        Some(queue) => metadata_with(
            metadata,
            "deadLetter",
            DEAD_LETTER_METADATA_KEY,
            Value::from(queue),
        ),
    }
}

/// The dead-letter queue `task` was submitted with. Most metadata is `{}`:
/// the substring test keeps the JSON parse off the claim path.
pub fn submitted_queue(task: &Task) -> Option<String> {
    if !task.metadata.contains(DEAD_LETTER_METADATA_KEY) {
        return None;
    }
    let metadata: Value = serde_json::from_str(&task.metadata).ok()?;
    Some(
        metadata
            .get(DEAD_LETTER_METADATA_KEY)?
            .as_str()?
            .to_string(),
    )
}

/// A letter's metadata: `failed`'s, without its route (a letter that fails
/// stays where it is), with where it came from and why.
pub fn letter_metadata(failed: &Task) -> String {
    let mut fields = match serde_json::from_str(&failed.metadata) {
        Ok(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    fields.remove(DEAD_LETTER_METADATA_KEY);
    let error = failed
        .error
        .as_deref()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .unwrap_or(Value::Null);
    fields.insert(
        DEAD_LETTERED_METADATA_KEY.into(),
        json!({
            "from": {"id": failed.id, "queue": failed.queue, "attempt": failed.attempt},
            "error": error,
        }),
    );
    Value::Object(fields).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_is_the_submits_then_the_registrations() {
        let plain = crate::task::tests::sample();
        let routed = Task {
            metadata: routed_metadata(Some(r#"{"a":1}"#.into()), Some("dlq".into()))
                .unwrap()
                .unwrap(),
            ..plain.clone()
        };
        assert_eq!(
            Route::of_task(&routed, Some("other")),
            Route::Queue("dlq".into())
        );
        assert_eq!(
            Route::of_task(&plain, Some("other")),
            Route::Queue("other".into())
        );
        assert_eq!(Route::of_task(&plain, None), Route::None);
        assert_eq!(Route::Stored.queue_of(&routed), Some("dlq".into()));
        assert_eq!(Route::Stored.queue_of(&plain), None);
        assert_eq!(
            routed_metadata(None, Some(String::new()))
                .unwrap_err()
                .to_string(),
            "deadLetter must be a non-empty string, got \"\""
        );
    }

    #[test]
    fn a_letter_says_where_it_came_from_and_loses_its_route() {
        let failed = Task {
            id: "task_1".into(),
            queue: "mail".into(),
            attempt: 3,
            error: Some(r#"{"message":"boom"}"#.into()),
            metadata: r#"{"trace":"t","cairnq.deadLetter":"dlq"}"#.into(),
            ..crate::task::tests::sample()
        };
        let metadata: Value = serde_json::from_str(&letter_metadata(&failed)).unwrap();
        assert_eq!(
            metadata,
            json!({
                "trace": "t",
                "cairnq.deadLettered": {
                    "from": {"id": "task_1", "queue": "mail", "attempt": 3},
                    "error": {"message": "boom"},
                },
            })
        );
    }
}
