//! The steps statements on Postgres (docs/protocol.md, "Durable steps"), over
//! any transport: the backend runs a step as one autocommit statement, a
//! suspension as one transaction.

use async_trait::async_trait;

use super::conn::{feature_installed, install_feature, rows};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::rows::cancel_by_id;
use super::transport::{end_tx, params, Param, PgRow, Session, Transport};
use crate::error::{Error, Result};
use crate::protocol::steps::POSTGRES as SQL;
use crate::store::backend::{HeldTask, StepBackend};
use crate::store::step_rows::{
    ChildState, ChildWait, NewStep, StepKind, StepSummary, StoredStep, Suspended, Wake,
};
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

/// `suspend.sql`: how it left the task, or `LostLease` (nothing changed).
async fn suspend_task<S: Session>(session: &S, owned: &HeldTask, wake: Wake) -> Result<Suspended> {
    let (wake_at, wake_after) = wake.params();
    let status = rows(
        session,
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

async fn child_state<S: Session>(session: &S, child_id: &str) -> Result<Option<ChildState>> {
    let found = rows(session, SQL.child_state, &params![&child_id]).await?;
    let Some(row) = found.first() else {
        return Ok(None);
    };
    Ok(Some(ChildState {
        status: row.text(0)?.parse::<Status>()?,
        result: row.opt_text(1)?,
        error: row.opt_text(2)?,
    }))
}

/// `record` (when `step` is given), the child's state (`FOR SHARE`: a
/// completion of the child under way is waited for and read), and unless it
/// has finished `suspend.sql` for `recheck_ms`, in the caller's transaction.
async fn wait_for_child<S: Session>(
    tx: &S,
    owned: &HeldTask,
    step: Option<&NewStep>,
    child_id: &str,
    recheck_ms: i64,
) -> Result<ChildWait> {
    if let Some(step) = step {
        record(tx, owned, step).await?;
    }
    match child_state(tx, child_id).await? {
        None => Ok(ChildWait::Gone),
        Some(child) if child.status.is_terminal() => Ok(ChildWait::Finished(child)),
        Some(_) => suspend_task(tx, owned, Wake::After(recheck_ms))
            .await
            .map(ChildWait::Suspended),
    }
}

/// `record` (when `step` is given), then `suspend.sql`, in the caller's
/// transaction (both read `now()`, the transaction's time).
pub(super) async fn suspend<S: Session>(
    tx: &S,
    owned: &HeldTask,
    step: Option<&NewStep>,
    wake: Wake,
) -> Result<Suspended> {
    if let Some(step) = step {
        record(tx, owned, step).await?;
    }
    suspend_task(tx, owned, wake).await
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

/// `live_children.sql`, then the protocol's cancel of each, in the caller's
/// transaction.
async fn cancel_children<S: Session>(tx: &S, task_id: &str) -> Result<Vec<Task>> {
    let ids = rows(tx, SQL.live_children, &params![&task_id]).await?;
    let mut canceled = Vec::with_capacity(ids.len());
    for row in ids {
        canceled.extend(cancel_by_id(tx, &row.text(0)?).await?);
    }
    Ok(canceled)
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
        let suspended = suspend(&tx, &owned, step.as_ref(), wake).await;
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
        let waited = wait_for_child(&tx, &owned, step.as_ref(), &child_id, recheck_ms).await;
        end_tx(tx, waited).await
    }

    async fn wake_parents(&self, child_ids: Vec<String>) -> Result<()> {
        wake_parents(&self.client().await?, &child_ids).await
    }

    async fn cancel_children(&self, task_id: String) -> Result<Vec<Task>> {
        let tx = self.begin().await?;
        let canceled = cancel_children(&tx, &task_id).await;
        end_tx(tx, canceled).await
    }
}
