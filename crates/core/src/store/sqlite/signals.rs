//! The signals statements on SQLite (docs/protocol.md, "Signals"): the steps
//! of a signal's and a wait's transaction (`signals/transaction.rs`
//! decides them), run on the writer's connection, so the write lock orders
//! them.

use async_trait::async_trait;
use rusqlite::Connection;

use super::conn::{apply_in_transaction, feature_installed};
use super::lifecycle::SqliteBackend;
use super::query::{at_once, query, Int, Params};
use super::rows::resolve_key;
use super::steps::WriterTx;
use crate::error::{Error, Result};
use crate::protocol::signals::SQLITE as SQL;
use crate::signals::backend::SignalBackend;
use crate::signals::rows::{
    NewSignal, PendingSignal, Sent, SignalSummaries, SignalWait, SignalWaitInput, StoredWait,
    WaitOutcome, WaitSummary,
};
use crate::signals::transaction::{self, SignalTransaction};
use crate::steps::rows::Suspended;
use crate::store::backend::{HeldTask, Target};
use crate::task::Status;

impl SignalTransaction for WriterTx<'_> {
    async fn lock_task(&mut self, task_id: &str) -> Result<Option<Status>> {
        let found = query(self.conn, SQL.task_status, &[(":id", &task_id)], |row| {
            row.get::<_, String>(0)
        })?;
        Ok(found.first().map(|text| text.parse()).transpose()?)
    }

    async fn task_of_key(&mut self, key: &str) -> Result<Option<String>> {
        Ok(resolve_key(self.conn, key)?.map(|task| task.id))
    }

    async fn insert_signal(&mut self, task_id: &str, signal: &NewSignal) -> Result<()> {
        let params: &Params<'_> = &[
            (":task_id", &task_id),
            (":name", &signal.name),
            (":payload", &signal.payload),
            (":now", &self.now),
        ];
        query(self.conn, SQL.send, params, |_| Ok(())).map(|_| ())
    }

    async fn wake_waiting(&mut self, task_id: &str, name: &str) -> Result<()> {
        let params: &Params<'_> = &[
            (":task_id", &task_id),
            (":name", &name),
            (":now", &self.now),
        ];
        query(self.conn, SQL.wake, params, |_| Ok(())).map(|_| ())
    }

    async fn wait_state(&mut self, task_id: &str, step_id: &str) -> Result<Option<StoredWait>> {
        let params: &Params<'_> = &[(":task_id", &task_id), (":step_id", &step_id)];
        let found = query(self.conn, SQL.wait_state, params, |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, Int>(1)?.0,
                row.get::<_, String>(2)?,
                row.get::<_, Option<String>>(3)?,
            ))
        })?;
        found
            .into_iter()
            .next()
            .map(|(name, timeout_at_ms, outcome, payload)| {
                Ok(StoredWait {
                    name,
                    timeout_at_ms,
                    outcome: outcome.parse()?,
                    payload,
                })
            })
            .transpose()
    }

    async fn take(
        &mut self,
        owned: &HeldTask,
        name: &str,
    ) -> Result<Option<(i64, Option<String>)>> {
        let params: &Params<'_> = &[
            (":task_id", &owned.task_id),
            (":worker_id", &owned.worker_id),
            (":name", &name),
            (":now", &self.now),
        ];
        let taken = query(self.conn, SQL.take, params, |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?;
        Ok(taken.into_iter().next())
    }

    async fn has_unconsumed(&mut self, task_id: &str, name: &str) -> Result<bool> {
        let params: &Params<'_> = &[(":task_id", &task_id), (":name", &name)];
        let found = query(self.conn, SQL.unconsumed, params, |row| {
            row.get::<_, bool>(0)
        })?;
        Ok(found.first().copied().unwrap_or(false))
    }

    async fn settle(
        &mut self,
        owned: &HeldTask,
        wait: &SignalWaitInput,
        outcome: WaitOutcome,
        signal_id: Option<i64>,
    ) -> Result<i64> {
        let outcome = outcome.as_str();
        let params: &Params<'_> = &[
            (":task_id", &owned.task_id),
            (":worker_id", &owned.worker_id),
            (":step_id", &wait.step_id),
            (":name", &wait.name),
            (":timeout_ms", &wait.timeout_ms),
            (":outcome", &outcome),
            (":signal_id", &signal_id),
            (":now", &self.now),
        ];
        let stored = query(self.conn, SQL.settle_wait, params, |row| {
            row.get::<_, Int>(0)
        })?;
        match stored.first() {
            Some(at) => Ok(at.0),
            None => Err(Error::LostLease {
                task_id: owned.task_id.clone(),
            }),
        }
    }
}

fn summaries(conn: &Connection, task_id: &str) -> Result<SignalSummaries> {
    let waits = query(conn, SQL.waits, &[(":task_id", &task_id)], |row| {
        Ok(WaitSummary {
            step_id: row.get(0)?,
            name: row.get(1)?,
            timeout_at_ms: row.get::<_, Int>(2)?.0,
            created_at_ms: row.get::<_, Int>(3)?.0,
        })
    })?;
    let pending = query(conn, SQL.pending, &[(":task_id", &task_id)], |row| {
        Ok(PendingSignal {
            name: row.get(0)?,
            size: row.get::<_, Option<Int>>(1)?.map_or(0, |size| size.0),
            sent_at_ms: row.get::<_, Int>(2)?.0,
        })
    })?;
    Ok(SignalSummaries { waits, pending })
}

#[async_trait]
impl SignalBackend for SqliteBackend {
    async fn signals_installed(&self) -> Result<bool> {
        self.read(|conn| feature_installed(conn, SQL.installed))
            .await
    }

    async fn install_signals(&self) -> Result<()> {
        self.transaction(|conn| apply_in_transaction(conn, &SQL.migration))
            .await
    }

    async fn send_signal(&self, target: Target, signal: NewSignal) -> Result<Sent> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            at_once(transaction::send(
                &mut WriterTx::new(conn, clock.now_ms()),
                &target,
                &signal,
            ))
        })
        .await
    }

    async fn wait_for_signal(&self, owned: HeldTask, input: SignalWaitInput) -> Result<SignalWait> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            let mut tx = WriterTx::new(conn, clock.now_ms());
            at_once(transaction::wait(&mut tx, &owned, &input))
        })
        .await
    }

    async fn suspend_for_waits(&self, owned: HeldTask, step_ids: Vec<String>) -> Result<Suspended> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            let mut tx = WriterTx::new(conn, clock.now_ms());
            at_once(transaction::suspend_for_waits(&mut tx, &owned, &step_ids))
        })
        .await
    }

    async fn signal_summaries(&self, task_id: String) -> Result<SignalSummaries> {
        self.read(move |conn| summaries(conn, &task_id)).await
    }
}
