//! Errors the worker survives, handed to `onError` (docs/api.md, "Worker
//! options") with the phase they happened in.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::error::Error;

/// Which part of the loop survived an error (`ErrorPhase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Claim,
    Execute,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Claim => "claim",
            Phase::Execute => "execute",
        }
    }
}

/// The second argument of `onError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorInfo {
    pub phase: Phase,
    /// Set for the execute phase.
    pub task_id: Option<String>,
}

pub type ErrorHook = Arc<dyn Fn(Error, ErrorInfo) + Send + Sync>;

/// Delivers survived errors to `onError`; a panicking hook is contained.
#[derive(Clone)]
pub(crate) struct Reporter(pub(crate) Option<ErrorHook>);

impl Reporter {
    fn report(&self, err: Error, phase: Phase, task_id: Option<&str>) {
        if let Some(hook) = &self.0 {
            let info = ErrorInfo {
                phase,
                task_id: task_id.map(str::to_string),
            };
            let _ = catch_unwind(AssertUnwindSafe(|| hook(err, info)));
        }
    }

    pub(crate) fn claim(&self, err: Error) {
        self.report(err, Phase::Claim, None);
    }

    pub(crate) fn execute(&self, err: Error, task_id: &str) {
        self.report(err, Phase::Execute, Some(task_id));
    }
}
