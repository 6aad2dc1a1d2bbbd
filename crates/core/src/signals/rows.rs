//! What the signals statements take and answer (docs/protocol.md,
//! "Signals"), and the decisions a wait makes between them
//! (`transaction.rs` makes them in order).

use std::str::FromStr;

use crate::error::{Error, Result};
use crate::steps::rows::Wake;
use crate::task::Status;

/// The table, as reports of its rows name it.
pub const SIGNALS_TABLE: &str = "cairnq_signals";

/// How a stored wait stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    /// Suspended until a signal or its timeout.
    Waiting,
    /// Consumed a signal (its `signal_id`).
    Signaled,
    /// Its timeout passed first.
    TimedOut,
}

impl WaitOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            WaitOutcome::Waiting => "waiting",
            WaitOutcome::Signaled => "signaled",
            WaitOutcome::TimedOut => "timed_out",
        }
    }
}

impl FromStr for WaitOutcome {
    type Err = Error;
    fn from_str(s: &str) -> Result<WaitOutcome> {
        match s {
            "waiting" => Ok(WaitOutcome::Waiting),
            "signaled" => Ok(WaitOutcome::Signaled),
            "timed_out" => Ok(WaitOutcome::TimedOut),
            other => Err(Error::Invalid(format!("unknown wait outcome {other}"))),
        }
    }
}

/// A signal to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSignal {
    pub name: String,
    /// The payload's JSON text (`None`: no payload).
    pub payload: Option<String>,
}

/// What `signal()` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// Stored for a task that has not finished (and that task woken if it
    /// waits for the name).
    Stored,
    /// The task has finished: nothing stored.
    Finished,
    /// No such task: nothing stored.
    NoTask,
}

impl Sent {
    /// What a signal does for a task of `status` (`None`: no such task).
    pub fn of(status: Option<Status>) -> Sent {
        match status {
            None => Sent::NoTask,
            Some(status) if status.is_terminal() => Sent::Finished,
            Some(_) => Sent::Stored,
        }
    }
}

/// `ctx.waitForSignal` as a wait's transaction runs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignalWaitInput {
    pub step_id: String,
    pub name: String,
    /// How long a wait reached the first time waits.
    pub timeout_ms: i64,
    /// When the running claim took the task (its `updated_at_ms`), on the
    /// clock that stamped the stored timeout.
    pub claimed_at_ms: i64,
}

/// A wait step as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredWait {
    pub name: String,
    pub timeout_at_ms: i64,
    pub outcome: WaitOutcome,
    /// The consumed signal's payload JSON (signaled waits).
    pub payload: Option<String>,
}

/// How a wait ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignalWait {
    /// A signal: its payload's JSON (`None`: no payload).
    Received(Option<String>),
    /// The timeout passed first.
    TimedOut,
    /// Stored as waiting; the run goes on, so that every wait its handler
    /// starts in the same turn is stored before the run suspends for all of
    /// them (`transaction::suspend_for_waits`).
    Waiting,
}

impl StoredWait {
    /// What a wait that ended in an earlier run replays; `None` while it
    /// waits. A stored wait for another name is refused: the handler changed.
    pub fn replayed(&self, wait: &SignalWaitInput) -> Result<Option<SignalWait>> {
        if self.name != wait.name {
            return Err(Error::Invalid(format!(
                "step \"{}\" waited for signal \"{}\", not \"{}\"; a wait keeps its signal name",
                wait.step_id, self.name, wait.name
            )));
        }
        Ok(match self.outcome {
            WaitOutcome::Waiting => None,
            WaitOutcome::Signaled => Some(SignalWait::Received(self.payload.clone())),
            WaitOutcome::TimedOut => Some(SignalWait::TimedOut),
        })
    }
}

/// A wait that found no signal to take: timed out once the task was claimed
/// at or after its stored timeout (as a sleep is served), or at once for a
/// first wait of no time; else it waits.
pub fn missed(stored: Option<&StoredWait>, wait: &SignalWaitInput) -> WaitOutcome {
    let timed_out = match stored {
        Some(stored) => stored.timeout_at_ms <= wait.claimed_at_ms,
        None => wait.timeout_ms == 0,
    };
    if timed_out {
        WaitOutcome::TimedOut
    } else {
        WaitOutcome::Waiting
    }
}

/// When a run suspended for its waits is due again: at once when one of
/// them already has a signal (sent while the run was running), else at the
/// earliest of their timeouts. `waits` holds each still-waiting wait's
/// timeout and whether a signal of its name is there.
pub fn waits_wake(waits: &[(i64, bool)]) -> Wake {
    if waits.iter().any(|&(_, signaled)| signaled) {
        return Wake::After(0);
    }
    match waits.iter().map(|&(timeout_at_ms, _)| timeout_at_ms).min() {
        Some(at) => Wake::At(at),
        None => Wake::After(0),
    }
}

/// A wait not yet served, as the dashboard and the command line show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitSummary {
    pub step_id: String,
    pub name: String,
    pub timeout_at_ms: i64,
    pub created_at_ms: i64,
}

/// A signal no wait has consumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingSignal {
    pub name: String,
    /// Bytes of the payload (0 without one).
    pub size: i64,
    pub sent_at_ms: i64,
}

/// A task's waits not yet served and its signals not yet consumed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SignalSummaries {
    pub waits: Vec<WaitSummary>,
    pub pending: Vec<PendingSignal>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(timeout_ms: i64, claimed_at_ms: i64) -> SignalWaitInput {
        SignalWaitInput {
            step_id: "approve".into(),
            name: "approval".into(),
            timeout_ms,
            claimed_at_ms,
        }
    }

    fn stored(outcome: WaitOutcome, timeout_at_ms: i64) -> StoredWait {
        StoredWait {
            name: "approval".into(),
            timeout_at_ms,
            outcome,
            payload: Some("1".into()),
        }
    }

    #[test]
    fn a_wait_replays_how_it_ended() {
        let wait = input(10, 0);
        assert_eq!(
            stored(WaitOutcome::Signaled, 5).replayed(&wait).unwrap(),
            Some(SignalWait::Received(Some("1".into())))
        );
        assert_eq!(
            stored(WaitOutcome::TimedOut, 5).replayed(&wait).unwrap(),
            Some(SignalWait::TimedOut)
        );
        assert_eq!(
            stored(WaitOutcome::Waiting, 5).replayed(&wait).unwrap(),
            None
        );
        let other = StoredWait {
            name: "payment".into(),
            ..stored(WaitOutcome::Waiting, 5)
        };
        assert_eq!(
            other.replayed(&wait).unwrap_err().to_string(),
            "step \"approve\" waited for signal \"payment\", not \"approval\"; a wait keeps its signal name"
        );
    }

    #[test]
    fn a_wait_times_out_once_claimed_at_or_after_its_timeout() {
        let waiting = stored(WaitOutcome::Waiting, 100);
        assert_eq!(missed(Some(&waiting), &input(10, 99)), WaitOutcome::Waiting);
        assert_eq!(
            missed(Some(&waiting), &input(10, 100)),
            WaitOutcome::TimedOut
        );
        assert_eq!(missed(None, &input(0, 0)), WaitOutcome::TimedOut);
        assert_eq!(missed(None, &input(1, 0)), WaitOutcome::Waiting);
    }

    #[test]
    fn a_run_waiting_for_several_signals_wakes_at_the_first_that_can_answer() {
        assert_eq!(waits_wake(&[(300, false), (200, false)]), Wake::At(200));
        assert_eq!(waits_wake(&[(300, false), (200, true)]), Wake::After(0));
        assert_eq!(waits_wake(&[]), Wake::After(0));
    }

    #[test]
    fn a_signal_is_stored_for_an_unfinished_task_only() {
        assert_eq!(Sent::of(None), Sent::NoTask);
        assert_eq!(Sent::of(Some(Status::Succeeded)), Sent::Finished);
        assert_eq!(Sent::of(Some(Status::Queued)), Sent::Stored);
        assert_eq!(Sent::of(Some(Status::Running)), Sent::Stored);
    }
}
