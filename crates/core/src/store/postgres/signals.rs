//! The signals statements on Postgres (docs/protocol.md, "Signals"), over any
//! transport: the steps of a signal's and a wait's transaction
//! (`signals/transaction.rs` decides them); `lock_task` locks the
//! task's row (`task_status.sql`), so the two take it in turn.

use async_trait::async_trait;

use super::conn::{execute, feature_installed, install_feature, rows};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::rows::resolve_key;
use super::steps::PgTx;
use super::transport::{end_tx, params, PgRow, Session, Transport};
use crate::error::{Error, Result};
use crate::protocol::signals::POSTGRES as SQL;
use crate::signals::backend::SignalBackend;
use crate::signals::rows::{
    NewSignal, PendingSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput, StoredWait,
    WaitOutcome, WaitSummary,
};
use crate::signals::transaction::{self, SignalTransaction};
use crate::steps::rows::Suspended;
use crate::store::backend::{HeldTask, Target};
use crate::task::Status;

impl<S: Session> SignalTransaction for PgTx<'_, S> {
    async fn lock_task(&mut self, task_id: &str) -> Result<Option<Status>> {
        match rows(self.0, SQL.task_status, &params![&task_id])
            .await?
            .first()
        {
            Some(row) => Ok(Some(row.text(0)?.parse()?)),
            None => Ok(None),
        }
    }

    async fn task_of_key(&mut self, key: &str) -> Result<Option<String>> {
        Ok(resolve_key(self.0, key).await?.map(|task| task.id))
    }

    async fn insert_signal(&mut self, task_id: &str, signal: &NewSignal) -> Result<()> {
        execute(
            self.0,
            SQL.send,
            &params![&task_id, &signal.name, &signal.payload],
        )
        .await
    }

    async fn wake_waiting(&mut self, task_id: &str, name: &str) -> Result<()> {
        rows(self.0, SQL.wake, &params![&task_id, &name])
            .await
            .map(|_| ())
    }

    async fn wait_state(&mut self, task_id: &str, step_id: &str) -> Result<Option<StoredWait>> {
        let found = rows(self.0, SQL.wait_state, &params![&task_id, &step_id]).await?;
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

    async fn take(
        &mut self,
        owned: &HeldTask,
        name: &str,
    ) -> Result<Option<(i64, Option<String>)>> {
        let taken = rows(
            self.0,
            SQL.take,
            &params![&owned.task_id, &owned.worker_id, &name],
        )
        .await?;
        match taken.first() {
            Some(row) => Ok(Some((row.int(0)?, row.opt_text(1)?))),
            None => Ok(None),
        }
    }

    async fn has_unconsumed(&mut self, task_id: &str, name: &str) -> Result<bool> {
        let found = rows(self.0, SQL.unconsumed, &params![&task_id, &name]).await?;
        match found.first() {
            Some(row) => row.bool(0),
            None => Ok(false),
        }
    }

    async fn settle(
        &mut self,
        owned: &HeldTask,
        wait: &SignalWaitInput,
        outcome: WaitOutcome,
        signal_id: Option<i64>,
    ) -> Result<i64> {
        let outcome = outcome.as_str();
        let stored = rows(
            self.0,
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
        let sent = transaction::send(&mut PgTx(&tx), &target, &signal).await;
        end_tx(tx, sent).await
    }

    async fn wait_for_signal(&self, owned: HeldTask, input: SignalWaitInput) -> Result<SignalWait> {
        let tx = self.begin().await?;
        let waited = transaction::wait(&mut PgTx(&tx), &owned, &input).await;
        end_tx(tx, waited).await
    }

    async fn suspend_for_waits(&self, owned: HeldTask, step_ids: Vec<String>) -> Result<Suspended> {
        let tx = self.begin().await?;
        let suspended = transaction::suspend_for_waits(&mut PgTx(&tx), &owned, &step_ids).await;
        end_tx(tx, suspended).await
    }

    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries> {
        summaries(&self.client().await?, &task_id).await
    }
}
