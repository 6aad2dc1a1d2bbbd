//! What the steps statements take and answer (docs/protocol.md, "Durable
//! steps"); `backend::StepBackend` runs them.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::task::Status;

/// The table, as reports of its rows name it.
pub const STEPS_TABLE: &str = "cairnq_steps";

/// What a row of `cairnq_steps` records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// `ctx.step`: a result.
    Step,
    /// `ctx.sleep` / `ctx.sleepUntil`: a wake time.
    Sleep,
    /// `ctx.callChild`: a child task.
    Child,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Step => "step",
            StepKind::Sleep => "sleep",
            StepKind::Child => "child",
        }
    }

    /// The context method that stores this kind, for messages.
    pub fn method(self) -> &'static str {
        match self {
            StepKind::Step => "ctx.step",
            StepKind::Sleep => "ctx.sleep",
            StepKind::Child => "ctx.callChild",
        }
    }
}

impl FromStr for StepKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<StepKind> {
        match s {
            "step" => Ok(StepKind::Step),
            "sleep" => Ok(StepKind::Sleep),
            "child" => Ok(StepKind::Child),
            other => Err(Error::Invalid(format!("unknown step kind {other}"))),
        }
    }
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A child task as its waiting parent reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildState {
    pub status: Status,
    /// The result's JSON text (`None`: no result).
    pub result: Option<String>,
    /// The error envelope's JSON text.
    pub error: Option<String>,
}

/// One stored step, as a run of its task replays it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredStep {
    pub step_id: String,
    pub kind: StepKind,
    /// A step's result JSON (`None`: the step returned nothing).
    pub result: Option<String>,
    /// A sleep's wake time.
    pub wake_at_ms: Option<i64>,
    /// A child step's child.
    pub child_id: Option<String>,
    pub created_at_ms: i64,
    /// The child's state; `None` for other kinds, or when the child is gone.
    pub child: Option<ChildState>,
}

/// One stored step as the dashboard and the command line show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepSummary {
    pub step_id: String,
    pub kind: StepKind,
    /// Bytes of the stored result (0 without one).
    pub size: i64,
    pub wake_at_ms: Option<i64>,
    pub child_id: Option<String>,
    pub created_at_ms: i64,
    /// `None` for other kinds, or when the child is gone.
    pub child_status: Option<Status>,
}

/// When a suspended task is due again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// At this epoch millisecond.
    At(i64),
    /// This many milliseconds after now, on the clock the dialect stamps
    /// times with (docs/protocol.md, "Clocks").
    After(i64),
}

impl Wake {
    /// `(wake_at_ms, wake_after_ms)` as the statements bind them.
    pub fn params(self) -> (Option<i64>, Option<i64>) {
        match self {
            Wake::At(at) => (Some(at), None),
            Wake::After(ms) => (None, Some(ms)),
        }
    }
}

/// A step row to insert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewStep {
    pub step_id: String,
    pub kind: StepKind,
    pub result: Option<String>,
    /// A sleep's wake time.
    pub wake: Option<Wake>,
    pub child_id: Option<String>,
}

/// How a suspension left the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suspended {
    /// Queued until its wake time.
    Queued,
    /// A cancel had been requested: the task ended canceled.
    Canceled,
}

/// How a wait for a child ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChildWait {
    /// The child had finished: the parent goes on, not suspended.
    Finished(ChildState),
    /// The child is gone (purged) before its parent read it.
    Gone,
    /// The parent went back to the queue.
    Suspended(Suspended),
}
