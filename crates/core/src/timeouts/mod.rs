//! Time limits per task and the reasons a handler's signal aborts
//! (docs/api.md, "Time limits and aborts"). A call's limit is the smallest
//! `timeoutMs` its tasks were submitted with, else its registration's
//! `timeoutMs`, else the worker's `maxRunMs`. A submit's limit travels in the
//! task's metadata (`"cairnq.timeoutMs"`): the protocol's columns are shared
//! with the Python SDK, whose workers ignore the key.

use std::time::Duration;

use serde_json::Value;

use crate::error::{js_number, Result};
use crate::input::{duration_ms, metadata_with, positive, stored_ms};
use crate::task::Task;

/// Where a task's metadata holds the `timeoutMs` it was submitted with.
pub const TIMEOUT_METADATA_KEY: &str = "cairnq.timeoutMs";

/// The metadata JSON to store for a submit with `timeoutMs` (a number > 0,
/// at most 1e15), or `metadata` unchanged without one.
pub fn timed_metadata(metadata: Option<String>, timeout_ms: Option<f64>) -> Result<Option<String>> {
    let Some(ms) = timeout_ms else {
        return Ok(metadata);
    };
    positive("timeoutMs", ms)?;
    let ms = stored_ms("timeoutMs", ms)?.max(1);
    metadata_with(metadata, "timeoutMs", TIMEOUT_METADATA_KEY, Value::from(ms))
}

/// A registration's `timeoutMs`: a number > 0 (Infinity: no limit).
pub fn registration_timeout(ms: Option<f64>) -> Result<Option<TimeLimit>> {
    ms.map(|ms| positive("timeoutMs", ms).map(|ms| TimeLimit::new("timeoutMs", ms)))
        .transpose()
}

/// How long a call may run, with the option that set it and its number as
/// the user wrote it (for the timeout's message).
#[derive(Clone, Debug, PartialEq)]
pub struct TimeLimit {
    pub limit: Duration,
    pub option: &'static str,
    pub shown: String,
}

impl TimeLimit {
    pub fn new(option: &'static str, ms: f64) -> TimeLimit {
        TimeLimit {
            limit: duration_ms(ms),
            option,
            shown: js_number(ms),
        }
    }

    /// The message of the `handler_timeout` failure of a call of `name`.
    pub fn exceeded(&self, name: &str) -> String {
        format!(
            "handler for {name} exceeded {}={}ms; the attempt was abandoned",
            self.option, self.shown
        )
    }

    /// The limit of a call of `tasks`: the smallest submitted one, else
    /// `configured` (the registration's, else the worker's).
    pub fn of_call<'a>(
        tasks: impl Iterator<Item = &'a Task>,
        configured: Option<&TimeLimit>,
    ) -> Option<TimeLimit> {
        tasks
            .filter_map(submitted_ms)
            .min()
            .map(|ms| TimeLimit::new("timeoutMs", ms as f64))
            .or_else(|| configured.cloned())
    }
}

/// The `timeoutMs` `task` was submitted with. Most metadata is `{}`: the
/// substring test keeps the JSON parse off the claim path.
fn submitted_ms(task: &Task) -> Option<i64> {
    if !task.metadata.contains(TIMEOUT_METADATA_KEY) {
        return None;
    }
    let metadata: Value = serde_json::from_str(&task.metadata).ok()?;
    metadata
        .get(TIMEOUT_METADATA_KEY)?
        .as_i64()
        .filter(|ms| *ms > 0)
}

/// Why a handler's `ctx.signal` aborted; the first reason sticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbortReason {
    /// The lease is gone: nothing the handler writes is recorded.
    LostLease,
    /// The call's time limit passed: the attempt was failed with
    /// `handler_timeout` and the handler abandoned.
    TimedOut,
    /// A cancel was requested (by any process): the task ends canceled
    /// whatever the handler does.
    Canceled,
    /// `stop({ timeoutMs })`'s deadline passed: the task was handed back to
    /// its queue and the handler abandoned.
    Shutdown,
}

impl AbortReason {
    /// The reason's name as the bindings hand it to JS.
    pub fn as_str(self) -> &'static str {
        match self {
            AbortReason::LostLease => "lostLease",
            AbortReason::TimedOut => "timeout",
            AbortReason::Canceled => "canceled",
            AbortReason::Shutdown => "shutdown",
        }
    }

    /// Whether the context's writes are refused from now on (a canceled
    /// task's handler may still write: a cancel wins every settlement).
    pub fn closes_gate(self) -> bool {
        !matches!(self, AbortReason::Canceled)
    }

    pub(crate) fn code(self) -> u8 {
        self as u8 + 1
    }

    pub(crate) fn from_code(code: u8) -> Option<AbortReason> {
        [
            AbortReason::LostLease,
            AbortReason::TimedOut,
            AbortReason::Canceled,
            AbortReason::Shutdown,
        ]
        .get(usize::from(code).checked_sub(1)?)
        .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(metadata: &str) -> Task {
        Task {
            metadata: metadata.into(),
            ..crate::task::tests::sample()
        }
    }

    #[test]
    fn a_submitted_timeout_joins_the_metadata_checked() {
        assert_eq!(
            timed_metadata(None, Some(250.0)).unwrap(),
            Some(r#"{"cairnq.timeoutMs":250}"#.into())
        );
        assert_eq!(
            timed_metadata(Some("[]".into()), None).unwrap(),
            Some("[]".into())
        );
        let refused = |metadata: Option<&str>, ms| {
            timed_metadata(metadata.map(Into::into), Some(ms))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(refused(None, 0.0), "timeoutMs must be > 0, got 0");
        assert_eq!(refused(None, f64::NAN), "timeoutMs must be > 0, got NaN");
        assert_eq!(
            refused(None, f64::INFINITY),
            "timeoutMs must be a finite number of milliseconds, at most 1e15 (about 31,700 years), got Infinity"
        );
        assert_eq!(
            refused(Some("[1]"), 5.0),
            "timeoutMs needs metadata to be an object, got [1]"
        );
        assert_eq!(
            registration_timeout(Some(-1.0)).unwrap_err().to_string(),
            "timeoutMs must be > 0, got -1"
        );
    }

    #[test]
    fn the_smallest_submitted_limit_wins_over_the_configured_one() {
        let configured = TimeLimit::new("maxRunMs", 5000.0);
        let plain = task("{}");
        let short = task(r#"{"cairnq.timeoutMs":200}"#);
        let shorter = task(r#"{"a":1,"cairnq.timeoutMs":100}"#);
        let limit = TimeLimit::of_call([&plain, &short, &shorter].into_iter(), Some(&configured));
        assert_eq!(limit, Some(TimeLimit::new("timeoutMs", 100.0)));
        assert_eq!(
            TimeLimit::of_call([&plain].into_iter(), Some(&configured)),
            Some(configured.clone())
        );
        assert_eq!(TimeLimit::of_call([&plain].into_iter(), None), None);
        let unreadable = task(r#"{"cairnq.timeoutMs":"soon"}"#);
        assert_eq!(TimeLimit::of_call([&unreadable].into_iter(), None), None);
        assert_eq!(
            configured.exceeded("hang"),
            "handler for hang exceeded maxRunMs=5000ms; the attempt was abandoned"
        );
    }

    #[test]
    fn reasons_round_trip_their_codes() {
        for reason in [
            AbortReason::LostLease,
            AbortReason::TimedOut,
            AbortReason::Canceled,
            AbortReason::Shutdown,
        ] {
            assert_eq!(AbortReason::from_code(reason.code()), Some(reason));
        }
        assert_eq!(AbortReason::from_code(0), None);
    }
}
