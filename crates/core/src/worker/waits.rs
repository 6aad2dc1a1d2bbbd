//! A context's waits for signals (docs/api.md, "Signals" and "Parallel
//! steps"): a wait that finds no signal is stored as waiting and the run goes
//! on, so every wait the handler starts in the same turn is stored; once the
//! handler has nothing else under way the bindings call `suspend_for_waits`,
//! and the task is queued until the first of them can answer.

use super::context::TaskContext;
use crate::error::Result;
use crate::signals::rows::{SignalWait, SignalWaitInput};

/// How `ctx.waitForSignal` answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitAnswer {
    /// The run is over (a step suspended the task): the handler stops.
    Over,
    /// Stored as waiting: it answers in a later run, once its signal or its
    /// timeout comes; this run suspends when its handler's turn is over.
    Waiting,
    /// The payload JSON of the signal it consumed (`None`: no payload, or
    /// the timeout passed first), stored or replayed.
    Answered(Option<String>),
}

impl TaskContext {
    /// `ctx.waitForSignal(id, name, {timeoutMs})`.
    pub async fn wait_for_signal(
        &self,
        id: &str,
        name: &str,
        timeout_ms: i64,
    ) -> Result<WaitAnswer> {
        if !self.step_gate()? {
            return Ok(WaitAnswer::Over);
        }
        self.may_suspend("ctx.waitForSignal")?;
        crate::input::name_field("signal name", name)?;
        self.step_log().check_wait_room()?;
        self.step_log().reach(id)?;
        let wait = SignalWaitInput {
            step_id: id.to_string(),
            name: name.to_string(),
            timeout_ms,
            claimed_at_ms: self.task().updated_at_ms,
        };
        match self.store().wait_for_signal(self.owned(), wait).await {
            Ok(SignalWait::Received(payload)) => Ok(WaitAnswer::Answered(payload)),
            Ok(SignalWait::TimedOut) => Ok(WaitAnswer::Answered(None)),
            Ok(SignalWait::Waiting) => {
                self.step_log().left_waiting(id);
                Ok(WaitAnswer::Waiting)
            }
            Err(err) => self.step_failed(err).map(|_: Option<()>| WaitAnswer::Over),
        }
    }

    /// The end of a run whose handler has nothing under way but waits left
    /// waiting: the task queued until the first of them can answer. False
    /// when there is nothing to suspend for (no wait left waiting, or the
    /// run already ended: the handler returned, or a step suspended it).
    pub async fn suspend_for_waits(&self) -> Result<bool> {
        let waiting = self.step_log().waiting();
        if waiting.is_empty() || self.suspended() || self.settled() {
            return Ok(false);
        }
        if self.lease_lost() {
            return Err(self.lost());
        }
        match self.store().suspend_for_waits(self.owned(), waiting).await {
            Ok(_) => {
                self.mark_suspended();
                Ok(true)
            }
            Err(err) => self.step_failed(err).map(|_: Option<()>| false),
        }
    }
}
