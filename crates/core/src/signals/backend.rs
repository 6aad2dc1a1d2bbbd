//! The signals seam (docs/protocol.md, "Signals"): what a dialect runs for
//! them, in its `signals.rs`; one of `Backend`'s supertraits.

use async_trait::async_trait;

use super::rows::{NewSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput};
use crate::error::Result;
use crate::steps::rows::Suspended;
use crate::store::backend_values::{HeldTask, Target};

/// The signals statements of one dialect (docs/protocol.md, "Signals"). A
/// signal and a wait each run in one transaction that takes the task's row
/// first, so one of them sees the other: a signal committed first is taken
/// by the wait, a wait committed first is woken by the signal.
#[async_trait]
pub trait SignalBackend: Send + Sync {
    /// Whether the signals tables exist (a catalog read).
    async fn signals_installed(&self) -> Result<bool>;
    /// Create the signals tables unless the ledger records them, as a
    /// migration is applied: on first use only.
    async fn install_signals(&self) -> Result<()>;
    /// Store `signal` for the task `target` names unless it has finished,
    /// and make the task due now if it waits for the signal's name.
    async fn send_signal(&self, target: Target, signal: NewSignal) -> Result<Sent>;
    /// A wait step of the task `owned` holds: its stored end replayed, else
    /// the oldest unconsumed signal of its name taken, else timed out or
    /// stored as waiting (the run goes on: `suspend_for_waits` ends it).
    async fn wait_for_signal(&self, owned: HeldTask, wait: SignalWaitInput) -> Result<SignalWait>;
    /// Suspend the held task for its waits `step_ids` (stored as waiting by
    /// this run): due at once if one has a signal, else at their earliest
    /// timeout.
    async fn suspend_for_waits(&self, owned: HeldTask, step_ids: Vec<String>) -> Result<Suspended>;
    /// The task's waits not yet served and signals not yet consumed.
    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries>;
}
