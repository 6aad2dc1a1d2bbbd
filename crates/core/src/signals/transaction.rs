//! A signal's and a wait's transaction, decided once for both dialects: each
//! dialect's `signals.rs` answers the steps of `SignalTransaction` by running
//! its statements (SQLite on the writer's connection, its futures ready at
//! their first poll; Postgres over its transport), and `send` and `wait`
//! decide what runs next. All take the task's row first (`lock_task`), so a
//! signal and a wait on one task take it in turn and each sees the other. A
//! wait that finds no signal is stored as waiting and the run goes on; once
//! the handler's turn is over, `suspend_for_waits` suspends the task for all
//! of the run's waits as a sleep does (`steps/transaction.rs`).

use super::rows::{
    missed, waits_wake, NewSignal, Sent, SignalWait, SignalWaitInput, StoredWait, WaitOutcome,
};
use crate::error::Result;
use crate::steps::rows::Suspended;
use crate::steps::transaction::StepTransaction;
use crate::store::backend_values::{HeldTask, Target};
use crate::task::Status;

// Not `Send`-bound: SQLite's connection is not `Sync`, and the core drives
// its futures on the writer's thread without a runtime.
#[allow(async_fn_in_trait)]
pub trait SignalTransaction: StepTransaction {
    /// The task's status, its row held until the transaction ends (Postgres
    /// locks it; SQLite's write lock already holds every row).
    async fn lock_task(&mut self, task_id: &str) -> Result<Option<Status>>;
    /// The id of the task `key` points at.
    async fn task_of_key(&mut self, key: &str) -> Result<Option<String>>;
    /// Store `signal` for the task, unconsumed.
    async fn insert_signal(&mut self, task_id: &str, signal: &NewSignal) -> Result<()>;
    /// Make the task due now if it waits for a signal named `name`.
    async fn wake_waiting(&mut self, task_id: &str, name: &str) -> Result<()>;
    /// The stored wait of step `step_id`, if the task has one.
    async fn wait_state(&mut self, task_id: &str, step_id: &str) -> Result<Option<StoredWait>>;
    /// Consume the oldest unconsumed signal named `name`: its id and payload.
    async fn take(&mut self, owned: &HeldTask, name: &str)
        -> Result<Option<(i64, Option<String>)>>;
    /// Whether a signal named `name` waits for the task, unconsumed.
    async fn has_unconsumed(&mut self, task_id: &str, name: &str) -> Result<bool>;
    /// Store the wait's `outcome`: its timeout, or `LostLease` when the
    /// worker no longer holds the task (nothing stored).
    async fn settle(
        &mut self,
        owned: &HeldTask,
        wait: &SignalWaitInput,
        outcome: WaitOutcome,
        signal_id: Option<i64>,
    ) -> Result<i64>;
}

/// `signal()`: the task's row, then the signal and the wake of a task
/// waiting for its name.
pub async fn send<T: SignalTransaction>(
    tx: &mut T,
    target: &Target,
    signal: &NewSignal,
) -> Result<Sent> {
    let id = match target {
        Target::Id(id) => id.clone(),
        Target::Key(key) => match tx.task_of_key(key).await? {
            Some(id) => id,
            None => return Ok(Sent::NoTask),
        },
    };
    let sent = Sent::of(tx.lock_task(&id).await?);
    if sent == Sent::Stored {
        tx.insert_signal(&id, signal).await?;
        tx.wake_waiting(&id, &signal.name).await?;
    }
    Ok(sent)
}

/// `ctx.waitForSignal`: a stored wait replays; else the oldest unconsumed
/// signal of its name is consumed; else the wait times out or is stored as
/// waiting (the run suspends later, for all its waits at once).
pub async fn wait<T: SignalTransaction>(
    tx: &mut T,
    owned: &HeldTask,
    wait: &SignalWaitInput,
) -> Result<SignalWait> {
    tx.lock_task(&owned.task_id).await?;
    let stored = tx.wait_state(&owned.task_id, &wait.step_id).await?;
    if let Some(done) = stored
        .as_ref()
        .map(|s| s.replayed(wait))
        .transpose()?
        .flatten()
    {
        return Ok(done);
    }
    if let Some((signal_id, payload)) = tx.take(owned, &wait.name).await? {
        tx.settle(owned, wait, WaitOutcome::Signaled, Some(signal_id))
            .await?;
        return Ok(SignalWait::Received(payload));
    }
    match missed(stored.as_ref(), wait) {
        WaitOutcome::TimedOut => {
            tx.settle(owned, wait, WaitOutcome::TimedOut, None).await?;
            Ok(SignalWait::TimedOut)
        }
        outcome => {
            tx.settle(owned, wait, outcome, None).await?;
            Ok(SignalWait::Waiting)
        }
    }
}

/// The end of a run whose handler waits only for signals: the task queued
/// until the first of the waits `step_ids` can answer (`waits_wake`). A
/// signal sent while the run was running makes it due at once, so none is
/// lost between a wait's store and this suspension.
pub async fn suspend_for_waits<T: SignalTransaction>(
    tx: &mut T,
    owned: &HeldTask,
    step_ids: &[String],
) -> Result<Suspended> {
    tx.lock_task(&owned.task_id).await?;
    let mut waits = Vec::with_capacity(step_ids.len());
    for step_id in step_ids {
        if let Some(stored) = tx.wait_state(&owned.task_id, step_id).await? {
            if stored.outcome == WaitOutcome::Waiting {
                let signaled = tx.has_unconsumed(&owned.task_id, &stored.name).await?;
                waits.push((stored.timeout_at_ms, signaled));
            }
        }
    }
    tx.suspend_task(owned, waits_wake(&waits)).await
}
