//! The signals statements on Postgres (docs/protocol.md, "Signals"), over any
//! transport: a signal and a wait each run as one transaction that locks the
//! task's row first (`task_status.sql`), so they take it in turn.

use async_trait::async_trait;

use super::conn::{execute, feature_installed, install_feature, rows};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::rows::resolve_key;
use super::steps::suspend;
use super::transport::{end_tx, params, PgRow, Session, Transport};
use crate::error::{Error, Result};
use crate::protocol::signals::POSTGRES as SQL;
use crate::store::backend::{HeldTask, SignalBackend, Target};
use crate::store::signal_rows::{
    missed, NewSignal, PendingSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput,
    StoredWait, WaitOutcome, WaitSummary,
};
use crate::store::step_rows::Wake;
use crate::task::Status;

/// The task's status, its row locked until the transaction ends.
async fn task_status<S: Session>(tx: &S, id: &str) -> Result<Option<Status>> {
    match rows(tx, SQL.task_status, &params![&id]).await?.first() {
        Some(row) => Ok(Some(row.text(0)?.parse()?)),
        None => Ok(None),
    }
}

/// `signal()` in the caller's transaction: the task's row locked, then the
/// signal and the wake of a task waiting for its name.
async fn send<S: Session>(tx: &S, target: &Target, signal: &NewSignal) -> Result<Sent> {
    let id = match target {
        Target::Id(id) => id.clone(),
        Target::Key(key) => match resolve_key(tx, key).await? {
            Some(task) => task.id,
            None => return Ok(Sent::NoTask),
        },
    };
    let sent = Sent::of(task_status(tx, &id).await?);
    if sent == Sent::Stored {
        execute(tx, SQL.send, &params![&id, &signal.name, &signal.payload]).await?;
        rows(tx, SQL.wake, &params![&id, &signal.name]).await?;
    }
    Ok(sent)
}

async fn wait_state<S: Session>(
    tx: &S,
    task_id: &str,
    step_id: &str,
) -> Result<Option<StoredWait>> {
    let found = rows(tx, SQL.wait_state, &params![&task_id, &step_id]).await?;
    let Some(row) = found.first() else {
        return Ok(None);
    };
    Ok(Some(StoredWait {
        name: row.text(0)?,
        timeout_at_ms: row.int(1)?,
        outcome: row.text(2)?.parse()?,
        payload: row.opt_text(3)?,
    }))
}

/// `take.sql`: the consumed signal's id and payload, if there was one.
async fn take<S: Session>(
    tx: &S,
    owned: &HeldTask,
    name: &str,
) -> Result<Option<(i64, Option<String>)>> {
    let taken = rows(
        tx,
        SQL.take,
        &params![&owned.task_id, &owned.worker_id, &name],
    )
    .await?;
    match taken.first() {
        Some(row) => Ok(Some((row.int(0)?, row.opt_text(1)?))),
        None => Ok(None),
    }
}

/// `settle_wait.sql`: the stored timeout, or `LostLease` (nothing stored).
async fn settle<S: Session>(
    tx: &S,
    owned: &HeldTask,
    wait: &SignalWaitInput,
    outcome: WaitOutcome,
    signal_id: Option<i64>,
) -> Result<i64> {
    let outcome = outcome.as_str();
    let stored = rows(
        tx,
        SQL.settle_wait,
        &params![
            &owned.task_id,
            &owned.worker_id,
            &wait.step_id,
            &wait.timeout_ms,
            &wait.name,
            &outcome,
            &signal_id,
        ],
    )
    .await?;
    match stored.first() {
        Some(row) => row.int(0),
        None => Err(Error::LostLease {
            task_id: owned.task_id.clone(),
        }),
    }
}

/// `ctx.waitForSignal` in the caller's transaction (`SignalBackend`).
async fn wait<S: Session>(tx: &S, owned: &HeldTask, wait: &SignalWaitInput) -> Result<SignalWait> {
    task_status(tx, &owned.task_id).await?;
    let stored = wait_state(tx, &owned.task_id, &wait.step_id).await?;
    if let Some(done) = stored
        .as_ref()
        .map(|s| s.replayed(wait))
        .transpose()?
        .flatten()
    {
        return Ok(done);
    }
    if let Some((signal_id, payload)) = take(tx, owned, &wait.name).await? {
        settle(tx, owned, wait, WaitOutcome::Signaled, Some(signal_id)).await?;
        return Ok(SignalWait::Received(payload));
    }
    match missed(stored.as_ref(), wait) {
        WaitOutcome::TimedOut => {
            settle(tx, owned, wait, WaitOutcome::TimedOut, None).await?;
            Ok(SignalWait::TimedOut)
        }
        outcome => {
            let timeout_at = settle(tx, owned, wait, outcome, None).await?;
            suspend(tx, owned, None, Wake::At(timeout_at))
                .await
                .map(SignalWait::Suspended)
        }
    }
}

async fn summaries<S: Session>(session: &S, task_id: &str) -> Result<SignalSummaries> {
    let waits = rows(session, SQL.waits, &params![&task_id])
        .await?
        .iter()
        .map(|row| {
            Ok(WaitSummary {
                step_id: row.text(0)?,
                name: row.text(1)?,
                timeout_at_ms: row.int(2)?,
                created_at_ms: row.int(3)?,
            })
        })
        .collect::<Result<_>>()?;
    let pending = rows(session, SQL.pending, &params![&task_id])
        .await?
        .iter()
        .map(|row| {
            Ok(PendingSignal {
                name: row.text(0)?,
                size: row.opt_int(1)?.unwrap_or(0),
                sent_at_ms: row.int(2)?,
            })
        })
        .collect::<Result<_>>()?;
    Ok(SignalSummaries { waits, pending })
}

#[async_trait]
impl<T: Transport + PushSource> SignalBackend for PostgresBackend<T> {
    async fn signals_installed(&self) -> Result<bool> {
        feature_installed(&self.client().await?, SQL.installed).await
    }

    async fn install_signals(&self) -> Result<()> {
        install_feature(self.begin().await?, &SQL.migration).await
    }

    async fn send_signal(&self, target: Target, signal: NewSignal) -> Result<Sent> {
        let tx = self.begin().await?;
        let sent = send(&tx, &target, &signal).await;
        end_tx(tx, sent).await
    }

    async fn wait_for_signal(&self, owned: HeldTask, input: SignalWaitInput) -> Result<SignalWait> {
        let tx = self.begin().await?;
        let waited = wait(&tx, &owned, &input).await;
        end_tx(tx, waited).await
    }

    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries> {
        summaries(&self.client().await?, &task_id).await
    }
}
