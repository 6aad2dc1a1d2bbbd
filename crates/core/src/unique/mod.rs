//! Uniqueness windows (docs/api.md, "Uniqueness window"): a keyed submit with
//! `unique: {forMs}` holds its key from the submit until `forMs` after its
//! task finished, not only while the task is live. The window travels in the
//! task's metadata (`"cairnq.unique"`), which every SDK stores untouched, and
//! is read from the row a keyed submit reads anyway: nothing is written at
//! finish, and a database without windows pays nothing.

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::input::{metadata_with, positive, stored_ms, Options};
use crate::task::Task;

/// Where a task's metadata holds the window it was submitted with.
pub const UNIQUE_METADATA_KEY: &str = "cairnq.unique";

/// A submit's `unique`: `{forMs}`, `None` when absent.
pub fn read(options: &mut Options) -> Result<Option<f64>> {
    let Some(mut fields) = options.object("unique", &["forMs"])? else {
        return Ok(None);
    };
    Ok(Some(fields.required_number("forMs")?))
}

/// The metadata to store for a submit with `unique.forMs` (a number > 0, at
/// most 1e15) under `key` with conflict `conflict` (as given; `reuse` when
/// absent), or `metadata` unchanged without one. Refused: no key, a conflict
/// a window cannot hold against (`replace` starts a new task whatever holds
/// the key), a debounced submit.
pub fn unique_metadata(
    metadata: Option<String>,
    for_ms: Option<f64>,
    key: Option<&str>,
    conflict: Option<&str>,
    debounced: bool,
) -> Result<Option<String>> {
    let Some(ms) = for_ms else {
        return Ok(metadata);
    };
    positive("unique.forMs", ms)?;
    let ms = stored_ms("unique.forMs", ms)?.max(1);
    if key.is_none() {
        return Err(Error::Invalid(
            "unique.forMs needs a key: the window holds the key".into(),
        ));
    }
    if debounced {
        return Err(Error::Invalid(
            "unique.forMs cannot be combined with debounceMs".into(),
        ));
    }
    if let Some(other @ "replace") = conflict {
        return Err(Error::Invalid(format!(
            "unique.forMs needs conflict \"reject\", \"reuse\" or \"reuse-succeeded\", got \"{other}\""
        )));
    }
    metadata_with(
        metadata,
        "unique",
        UNIQUE_METADATA_KEY,
        json!({ "forMs": ms }),
    )
}

/// Whether the window of a finished `task` still holds its key at `now`
/// (until `completed_at_ms + forMs`); `None` for a live task or one submitted
/// without a window (the plain decision table applies). Most metadata is
/// `{}`: the substring test keeps the JSON parse off keyed submits.
pub fn window_open(task: &Task, now: i64) -> Option<bool> {
    if !task.status.is_terminal() || !task.metadata.contains(UNIQUE_METADATA_KEY) {
        return None;
    }
    let metadata: Value = serde_json::from_str(&task.metadata).ok()?;
    let for_ms = metadata.get(UNIQUE_METADATA_KEY)?.get("forMs")?.as_i64()?;
    let finished = task.completed_at_ms.unwrap_or(task.updated_at_ms);
    Some(now < finished.saturating_add(for_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::Status;

    fn finished(metadata: &str, completed_at_ms: i64) -> Task {
        Task {
            status: Status::Succeeded,
            metadata: metadata.into(),
            completed_at_ms: Some(completed_at_ms),
            ..crate::task::tests::sample()
        }
    }

    #[test]
    fn a_window_joins_the_metadata_checked() {
        assert_eq!(
            unique_metadata(None, Some(500.0), Some("k"), None, false).unwrap(),
            Some(r#"{"cairnq.unique":{"forMs":500}}"#.into())
        );
        assert_eq!(
            unique_metadata(None, None, None, None, false).unwrap(),
            None
        );
        let refused = |ms, key, conflict, debounced| {
            unique_metadata(None, Some(ms), key, conflict, debounced)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refused(0.0, Some("k"), None, false),
            "unique.forMs must be > 0, got 0"
        );
        assert_eq!(
            refused(5.0, None, None, false),
            "unique.forMs needs a key: the window holds the key"
        );
        assert_eq!(
            refused(5.0, Some("k"), Some("replace"), false),
            "unique.forMs needs conflict \"reject\", \"reuse\" or \"reuse-succeeded\", got \"replace\""
        );
        assert_eq!(
            refused(5.0, Some("k"), None, true),
            "unique.forMs cannot be combined with debounceMs"
        );
    }

    #[test]
    fn a_finished_task_holds_its_key_until_its_window_ends() {
        let held = finished(r#"{"cairnq.unique":{"forMs":1000}}"#, 5_000);
        assert_eq!(window_open(&held, 5_999), Some(true));
        assert_eq!(window_open(&held, 6_000), Some(false));
        assert_eq!(window_open(&finished("{}", 5_000), 5_001), None);
        let live = Task {
            status: Status::Running,
            ..held
        };
        assert_eq!(
            window_open(&live, 9_999),
            None,
            "a live task holds its key anyway"
        );
    }
}
