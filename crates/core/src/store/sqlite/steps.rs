//! The steps statements on SQLite (docs/protocol.md, "Durable steps"); the
//! backend runs them through the writer's queue, so a step shares its commit
//! with whatever else this process writes at that moment, and a
//! suspension's statements commit together. `WriterTx` answers the steps of
//! a suspension, a child wait and a cancel's cascade
//! (`steps/transaction.rs` decides them), and of a signal's and a
//! wait's transaction (`signals.rs`).

use async_trait::async_trait;
use rusqlite::{Connection, Row};

use super::conn::{apply_in_transaction, feature_installed};
use super::lifecycle::SqliteBackend;
use super::query::{at_once, key_at, query, Cells, Params};
use super::rows::{json_list, resolve_key, update_one};
use super::writes::cancel_by_id;
use crate::error::{Error, Result};
use crate::protocol::steps::SQLITE as SQL;
use crate::steps::backend::StepBackend;
use crate::steps::restart::{restart_from_step, RestartTransaction};
use crate::steps::rows::{
    ChildState, ChildWait, NewStep, StepKind, StepSummary, StoredStep, Suspended, Wake, STEPS_TABLE,
};
use crate::steps::transaction::{self, StepTransaction};
use crate::store::backend::{HeldTask, Target};
use crate::store::bad_rows::{readable, BadRow};
use crate::task::{Status, Task};

fn lost(owned: &HeldTask) -> Error {
    Error::LostLease {
        task_id: owned.task_id.clone(),
    }
}

fn status_at(row: &Cells<'_, '_>, index: usize) -> std::result::Result<Option<Status>, BadRow> {
    row.get::<Option<String>>(index, "child status")?
        .map(|text| {
            text.parse()
                .map_err(|_| row.bad_at("child status", format!("holds {text:?}")))
        })
        .transpose()
}

fn kind_at(row: &Cells<'_, '_>, index: usize) -> std::result::Result<StepKind, BadRow> {
    let text: String = row.get(index, "kind")?;
    text.parse()
        .map_err(|_| row.bad_at("kind", format!("holds {text:?}")))
}

/// A step row's cells, known by its task and step ids.
fn cells<'r, 's>(row: &'r Row<'s>, task_id: &str) -> Cells<'r, 's> {
    Cells::new(row, STEPS_TABLE, format!("{task_id}/{}", key_at(row, 0)))
}

/// A child's state from its status, result and error at `at` and after
/// (`None`: no such child).
fn child_at(row: &Cells<'_, '_>, at: usize) -> std::result::Result<Option<ChildState>, BadRow> {
    Ok(match status_at(row, at)? {
        Some(status) => Some(ChildState {
            status,
            result: row.get(at + 1, "child result")?,
            error: row.get(at + 2, "child error")?,
        }),
        None => None,
    })
}

fn stored_from_row(row: &Cells<'_, '_>) -> std::result::Result<StoredStep, BadRow> {
    Ok(StoredStep {
        step_id: row.get(0, "step_id")?,
        kind: kind_at(row, 1)?,
        result: row.get(2, "result")?,
        wake_at_ms: row.opt_int(3, "wake_at_ms")?,
        child_id: row.get(4, "child_id")?,
        created_at_ms: row.int(5, "created_at_ms")?,
        child: child_at(row, 6)?,
    })
}

fn summary_from_row(row: &Cells<'_, '_>) -> std::result::Result<StepSummary, BadRow> {
    Ok(StepSummary {
        step_id: row.get(0, "step_id")?,
        kind: kind_at(row, 1)?,
        size: row.opt_int(2, "result")?.unwrap_or(0),
        wake_at_ms: row.opt_int(3, "wake_at_ms")?,
        child_id: row.get(4, "child_id")?,
        created_at_ms: row.int(5, "created_at_ms")?,
        child_status: status_at(row, 6)?,
    })
}

/// The writer's connection inside its transaction, and the transaction's
/// clock: every statement of a suspension, a child wait or a signal reads
/// the same `:now`, so a sleep's stored wake time is the time its task is due.
pub(super) struct WriterTx<'c> {
    pub(super) conn: &'c Connection,
    pub(super) now: i64,
}

impl<'c> WriterTx<'c> {
    pub(super) fn new(conn: &'c Connection, now: i64) -> Self {
        WriterTx { conn, now }
    }
}

impl RestartTransaction for WriterTx<'_> {
    async fn key_task(&mut self, key: &str) -> Result<Option<String>> {
        Ok(resolve_key(self.conn, key)?.map(|task| task.id))
    }

    async fn restart_target(
        &mut self,
        task_id: &str,
        step_id: &str,
    ) -> Result<Option<(Status, Option<i64>)>> {
        let params: &Params<'_> = &[(":task_id", &task_id), (":step_id", &step_id)];
        let found = query(self.conn, SQL.restart_target, params, |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, Option<i64>>(1)?))
        })?;
        found
            .into_iter()
            .next()
            .map(|(status, stored_at)| Ok((status.parse()?, stored_at)))
            .transpose()
    }

    async fn drop_steps_from(
        &mut self,
        task_id: &str,
        step_id: &str,
        created_at_ms: i64,
    ) -> Result<()> {
        let params: &Params<'_> = &[
            (":task_id", &task_id),
            (":step_id", &step_id),
            (":created_at_ms", &created_at_ms),
        ];
        query(self.conn, SQL.drop_from, params, |_| Ok(())).map(|_| ())
    }

    async fn requeue(&mut self, task_id: &str, reset_attempt: bool) -> Result<Option<Task>> {
        let params: &Params<'_> = &[
            (":id", &task_id),
            (":reset_attempt", &reset_attempt),
            (":now", &self.now),
        ];
        update_one(self.conn, SQL.restart, task_id, params)
    }
}

impl StepTransaction for WriterTx<'_> {
    async fn record(&mut self, owned: &HeldTask, step: &NewStep) -> Result<i64> {
        record(self.conn, owned, step, self.now)
    }

    async fn suspend_task(&mut self, owned: &HeldTask, wake: Wake) -> Result<Suspended> {
        let (wake_at, wake_after) = wake.params();
        let params: &Params<'_> = &[
            (":id", &owned.task_id),
            (":worker_id", &owned.worker_id),
            (":wake_at_ms", &wake_at),
            (":wake_after_ms", &wake_after),
            (":now", &self.now),
        ];
        let status = query(self.conn, SQL.suspend, params, |row| {
            row.get::<_, String>(0)
        })?;
        match status.first().map(String::as_str) {
            None => Err(lost(owned)),
            Some("canceled") => Ok(Suspended::Canceled),
            Some(_) => Ok(Suspended::Queued),
        }
    }

    async fn child_state(&mut self, child_id: &str) -> Result<Option<ChildState>> {
        let found = query(
            self.conn,
            SQL.child_state,
            &[(":child_id", &child_id)],
            |row| Ok(child_at(&Cells::new(row, STEPS_TABLE, child_id.into()), 0)),
        )?;
        Ok(found.into_iter().next().transpose()?.flatten())
    }

    async fn live_children(&mut self, task_id: &str) -> Result<Vec<String>> {
        query(
            self.conn,
            SQL.live_children,
            &[(":task_id", &task_id)],
            |row| row.get::<_, String>(0),
        )
    }

    async fn cancel(&mut self, task_id: &str) -> Result<Option<Task>> {
        cancel_by_id(self.conn, task_id, self.now)
    }
}

/// `record.sql` at `now`: the stored-at time, or `LostLease` (nothing stored).
fn record(conn: &Connection, owned: &HeldTask, step: &NewStep, now: i64) -> Result<i64> {
    let (wake_at, wake_after) = step.wake.map_or((None, None), Wake::params);
    let kind = step.kind.as_str();
    let params: &Params<'_> = &[
        (":task_id", &owned.task_id),
        (":worker_id", &owned.worker_id),
        (":step_id", &step.step_id),
        (":kind", &kind),
        (":result", &step.result),
        (":wake_at_ms", &wake_at),
        (":wake_after_ms", &wake_after),
        (":child_id", &step.child_id),
        (":now", &now),
    ];
    let stored = query(conn, SQL.record, params, |row| row.get::<_, i64>(0))?;
    stored.into_iter().next().ok_or_else(|| lost(owned))
}

/// The task's steps for a run to replay: a row that cannot be read fails
/// the run (skipping it would run its step again).
fn load(conn: &Connection, task_id: &str) -> Result<Vec<StoredStep>> {
    let rows = query(conn, SQL.load, &[(":task_id", &task_id)], |row| {
        Ok(stored_from_row(&cells(row, task_id)))
    })?;
    Ok(rows.into_iter().collect::<std::result::Result<_, _>>()?)
}

/// The task's steps to show: a row that cannot be read is skipped, reported.
fn summaries(conn: &Connection, task_id: &str) -> Result<Vec<StepSummary>> {
    let rows = query(conn, SQL.summaries, &[(":task_id", &task_id)], |row| {
        Ok(summary_from_row(&cells(row, task_id)))
    })?;
    Ok(readable(rows))
}

fn wake_parents(conn: &Connection, child_ids: &[String], now: i64) -> Result<()> {
    let child_ids = json_list(child_ids);
    query(
        conn,
        SQL.wake_parents,
        &[(":child_ids", &child_ids), (":now", &now)],
        |_| Ok(()),
    )
    .map(|_| ())
}

#[async_trait]
impl StepBackend for SqliteBackend {
    async fn steps_installed(&self) -> Result<bool> {
        self.read(|conn| feature_installed(conn, SQL.installed))
            .await
    }

    async fn install_steps(&self) -> Result<()> {
        self.transaction(|conn| apply_in_transaction(conn, &SQL.migration))
            .await
    }

    async fn load_steps(&self, task_id: String) -> Result<Vec<StoredStep>> {
        self.read(move |conn| load(conn, &task_id)).await
    }

    async fn step_summaries(&self, task_id: String) -> Result<Vec<StepSummary>> {
        self.read(move |conn| summaries(conn, &task_id)).await
    }

    async fn record_step(&self, owned: HeldTask, step: NewStep) -> Result<i64> {
        let clock = self.clock.clone();
        self.write(move |conn| record(conn, &owned, &step, clock.now_ms()))
            .await
    }

    async fn suspend(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        wake: Wake,
    ) -> Result<Suspended> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            at_once(transaction::suspend(
                &mut WriterTx::new(conn, clock.now_ms()),
                &owned,
                step.as_ref(),
                wake,
            ))
        })
        .await
    }

    async fn wait_for_child(
        &self,
        owned: HeldTask,
        step: Option<NewStep>,
        child_id: String,
        recheck_ms: i64,
    ) -> Result<ChildWait> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            at_once(transaction::wait_for_child(
                &mut WriterTx::new(conn, clock.now_ms()),
                &owned,
                step.as_ref(),
                &child_id,
                recheck_ms,
            ))
        })
        .await
    }

    async fn wake_parents(&self, child_ids: Vec<String>) -> Result<()> {
        let clock = self.clock.clone();
        self.write(move |conn| wake_parents(conn, &child_ids, clock.now_ms()))
            .await
    }

    async fn cancel_children(&self, task_id: String) -> Result<Vec<Task>> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            at_once(transaction::cancel_children(
                &mut WriterTx::new(conn, clock.now_ms()),
                &task_id,
            ))
        })
        .await
    }

    async fn restart_from_step(
        &self,
        target: Target,
        step_id: String,
        reset_attempt: bool,
    ) -> Result<Option<Task>> {
        let clock = self.clock.clone();
        self.transaction(move |conn| {
            at_once(restart_from_step(
                &mut WriterTx::new(conn, clock.now_ms()),
                &target,
                &step_id,
                reset_attempt,
            ))
        })
        .await
    }
}
