//! The steps statements on Postgres (docs/protocol.md, "Durable steps"), over
//! any transport: the backend runs a step as one autocommit statement, a
//! suspension, a child wait and a cancel's cascade each as one transaction
//! (`PgTx`).

use async_trait::async_trait;

use super::conn::{feature_installed, install_feature, rows, task};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::rows::{cancel_by_id, resolve_key};
use super::transport::{end_tx, params, Param, PgRow, Session, Transport};
use crate::error::{Error, Result};
use crate::protocol::steps::POSTGRES as SQL;
use crate::steps::backend::StepBackend;
use crate::steps::restart::{restart_from_step, RestartTransaction};
use crate::steps::rows::{
    ChildState, ChildWait, NewStep, StepKind, StepSummary, StoredStep, Suspended, Wake,
};
use crate::steps::transaction::{self, StepTransaction};
use crate::store::backend::{HeldTask, Target};
use crate::task::{Status, Task};

fn lost(owned: &HeldTask) -> Error {
    Error::LostLease {
        task_id: owned.task_id.clone(),
    }
}

fn status_at<R: PgRow>(row: &R, index: usize) -> Result<Option<Status>> {
    Ok(row.opt_text(index)?.map(|text| text.parse()).transpose()?)
}

fn stored_from_row<R: PgRow>(row: &R) -> Result<StoredStep> {
    let child = match status_at(row, 6)? {
        Some(status) => Some(ChildState {
            status,
            result: row.opt_text(7)?,
            error: row.opt_text(8)?,
        }),
        None => None,
    };
    Ok(StoredStep {
        step_id: row.text(0)?,
        kind: row.text(1)?.parse()?,
        result: row.opt_text(2)?,
        wake_at_ms: row.opt_int(3)?,
        child_id: row.opt_text(4)?,
        created_at_ms: row.int(5)?,
        child,
    })
}

fn summary_from_row<R: PgRow>(row: &R) -> Result<StepSummary> {
    Ok(StepSummary {
        step_id: row.text(0)?,
        kind: row.text(1)?.parse::<StepKind>()?,
        size: row.opt_int(2)?.unwrap_or(0),
        wake_at_ms: row.opt_int(3)?,
        child_id: row.opt_text(4)?,
        created_at_ms: row.int(5)?,
        child_status: status_at(row, 6)?,
    })
}

/// `record.sql`: the stored-at time, or `LostLease` (nothing stored).
async fn record<S: Session>(session: &S, owned: &HeldTask, step: &NewStep) -> Result<i64> {
    let (wake_at, wake_after) = step.wake.map_or((None, None), Wake::params);
    let kind = step.kind.as_str();
    let stored = rows(
        session,
        SQL.record,
        &params![
            &owned.task_id,
            &owned.worker_id,
            &step.step_id,
            &kind,
            &step.result,
            &wake_at,
            &wake_after,
            &step.child_id,
        ],
    )
    .await?;
    match stored.first() {
        Some(row) => row.int(0),
        None => Err(lost(owned)),
    }
}

/// The caller's transaction, answering the steps of a suspension, a child
/// wait and a cancel's cascade (`steps/transaction.rs` decides them),
/// and of a signal's and a wait's transaction (`signals.rs`). Its statements
/// read `now()`, the transaction's time, so a sleep's stored wake time is the
/// time its task is due.
pub(super) struct PgTx<'t, S>(pub(super) &'t S);

impl<S: Session> RestartTransaction for PgTx<'_, S> {
    async fn key_task(&mut self, key: &str) -> Result<Option<String>> {
        Ok(resolve_key(self.0, key).await?.map(|task| task.id))
    }

    async fn restart_target(
        &mut self,
        task_id: &str,
        step_id: &str,
    ) -> Result<Option<(Status, Option<i64>)>> {
        let found = rows(self.0, SQL.restart_target, &params![&task_id, &step_id]).await?;
        let Some(row) = found.first() else {
            return Ok(None);
        };
        Ok(Some((row.text(0)?.parse()?, row.opt_int(1)?)))
    }

    async fn drop_steps_from(
        &mut self,
        task_id: &str,
        step_id: &str,
        created_at_ms: i64,
    ) -> Result<()> {
        rows(
            self.0,
            SQL.drop_from,
            &params![&task_id, &step_id, &created_at_ms],
        )
        .await
        .map(|_| ())
    }

    async fn requeue(&mut self, task_id: &str, reset_attempt: bool) -> Result<Option<Task>> {
        task(self.0, SQL.restart, &params![&task_id, &reset_attempt]).await
    }
}

impl<S: Session> StepTransaction for PgTx<'_, S> {
    async fn record(&mut self, owned: &HeldTask, step: &NewStep) -> Result<i64> {
        record(self.0, owned, step).await
    }

    async fn suspend_task(&mut self, owned: &HeldTask, wake: Wake) -> Result<Suspended> {
        let (wake_at, wake_after) = wake.params();
        let status = rows(
            self.0,
            SQL.suspend,
            &params![&owned.task_id, &owned.worker_id, &wake_at, &wake_after],
        )
        .await?;
        match status
            .first()
            .map(|row| row.text(0))
            .transpose()?
            .as_deref()
        {
            None => Err(lost(owned)),
            Some("canceled") => Ok(Suspended::Canceled),
            Some(_) => Ok(Suspended::Queued),
        }
    }

    async fn child_state(&mut self, child_id: &str) -> Result<Option<ChildState>> {
        let found = rows(self.0, SQL.child_state, &params![&child_id]).await?;
        let Some(row) = found.first() else {
            return Ok(None);
        };
        Ok(Some(ChildState {
            status: row.text(0)?.parse::<Status>()?,
            result: row.opt_text(1)?,
            error: row.opt_text(2)?,
        }))
    }

    async fn live_children(&mut self, task_id: &str) -> Result<Vec<String>> {
        rows(self.0, SQL.live_children, &params![&task_id])
            .await?
            .iter()
            .map(|row| row.text(0))
            .collect()
    }

    async fn cancel(&mut self, task_id: &str) -> Result<Option<Task>> {
        cancel_by_id(self.0, task_id).await
    }
}

async fn load<S: Session>(session: &S, task_id: &str) -> Result<Vec<StoredStep>> {
    rows(session, SQL.load, &params![&task_id])
        .await?
        .iter()
        .map(stored_from_row)
        .collect()
}

async fn summaries<S: Session>(session: &S, task_id: &str) -> Result<Vec<StepSummary>> {
    rows(session, SQL.summaries, &params![&task_id])
        .await?
        .iter()
        .map(summary_from_row)
        .collect()
}

async fn wake_parents<S: Session>(session: &S, child_ids: &[String]) -> Result<()> {
    rows(session, SQL.wake_parents, &[Param::Texts(child_ids)])
        .await
        .map(|_| ())
}

#[async_trait]
impl<T: Transport + PushSource> StepBackend for PostgresBackend<T> {
    async fn steps_installed(&self) -> Result<bool> {
        feature_installed(&self.client().await?, SQL.installed).await
    }

    async fn install_steps(&self) -> Result<()> {
        install_feature(self.begin().await?, &SQL.migration).await
    }

    async fn load_steps(&self, task_id: String) -> Result<Vec<StoredStep>> {
        load(&self.client().await?, &task_id).await
    }

    async fn step_summaries(&self, task_id: String) -> Result<Vec<StepSummary>> {
        summaries(&self.client().await?, &task_id).await
    }

    async fn record_step(&self, owned: HeldTask, step: NewStep) -> Result<i64> {
        record(&self.client().await?, &owned, &step).await
    }

    async fn suspend(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        wake: Wake,
    ) -> Result<Suspended> {
        let tx = self.begin().await?;
        let suspended = transaction::suspend(&mut PgTx(&tx), &owned, step.as_ref(), wake).await;
        end_tx(tx, suspended).await
    }

    async fn wait_for_child(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        child_id: String,
        recheck_ms: i64,
    ) -> Result<ChildWait> {
        let tx = self.begin().await?;
        let waited = transaction::wait_for_child(
            &mut PgTx(&tx),
            &owned,
            step.as_ref(),
            &child_id,
            recheck_ms,
        )
        .await;
        end_tx(tx, waited).await
    }

    async fn wake_parents(&self, child_ids: Vec<String>) -> Result<()> {
        wake_parents(&self.client().await?, &child_ids).await
    }

    async fn cancel_children(&self, task_id: String) -> Result<Vec<Task>> {
        let tx = self.begin().await?;
        let canceled = transaction::cancel_children(&mut PgTx(&tx), &task_id).await;
        end_tx(tx, canceled).await
    }

    async fn restart_from_step(
        &self,
        target: Target,
        step_id: String,
        reset_attempt: bool,
    ) -> Result<Option<Task>> {
        let tx = self.begin().await?;
        let restarted = restart_from_step(&mut PgTx(&tx), &target, &step_id, reset_attempt).await;
        end_tx(tx, restarted).await
    }
}
