//! The steps statements on SQLite (docs/protocol.md, "Durable steps"); the
//! backend runs them through the writer's queue, so a step shares its commit
//! with whatever else this process writes at that moment, and a
//! suspension's statements commit together.

use rusqlite::{Connection, Row};

use super::conn::apply_in_transaction;
use super::query::{query, Params};
use super::rows::json_list;
use crate::error::{Error, Result};
use crate::ids::now_ms;
use crate::protocol::steps::SQLITE as SQL;
use crate::store::backend::HeldTask;
use crate::store::step_rows::{
    ChildState, ChildWait, NewStep, StepSummary, StoredStep, Suspended, Wake,
};
use crate::task::Status;

fn lost(owned: &HeldTask) -> Error {
    Error::LostLease {
        task_id: owned.task_id.clone(),
    }
}

fn status_at(row: &Row<'_>, index: usize) -> rusqlite::Result<Option<Status>> {
    row.get::<_, Option<String>>(index)?
        .map(|text| {
            text.parse().map_err(|_| {
                rusqlite::Error::FromSqlConversionFailure(
                    index,
                    rusqlite::types::Type::Text,
                    format!("unknown status {text}").into(),
                )
            })
        })
        .transpose()
}

fn kind_at(row: &Row<'_>, index: usize) -> rusqlite::Result<crate::store::step_rows::StepKind> {
    let text: String = row.get(index)?;
    text.parse().map_err(|err: Error| {
        rusqlite::Error::FromSqlConversionFailure(
            index,
            rusqlite::types::Type::Text,
            err.to_string().into(),
        )
    })
}

fn stored_from_row(row: &Row<'_>) -> rusqlite::Result<StoredStep> {
    let child = match status_at(row, 6)? {
        Some(status) => Some(ChildState {
            status,
            result: row.get(7)?,
            error: row.get(8)?,
        }),
        None => None,
    };
    Ok(StoredStep {
        step_id: row.get(0)?,
        kind: kind_at(row, 1)?,
        result: row.get(2)?,
        wake_at_ms: row.get(3)?,
        child_id: row.get(4)?,
        created_at_ms: row.get(5)?,
        child,
    })
}

fn summary_from_row(row: &Row<'_>) -> rusqlite::Result<StepSummary> {
    Ok(StepSummary {
        step_id: row.get(0)?,
        kind: kind_at(row, 1)?,
        size: row.get::<_, Option<i64>>(2)?.unwrap_or(0),
        wake_at_ms: row.get(3)?,
        child_id: row.get(4)?,
        created_at_ms: row.get(5)?,
        child_status: status_at(row, 6)?,
    })
}

/// `record.sql`: the stored-at time, or `LostLease` (nothing stored).
pub fn record(conn: &Connection, owned: &HeldTask, step: &NewStep) -> Result<i64> {
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
        (":now", &now_ms()),
    ];
    let stored = query(conn, SQL.record, params, |row| row.get::<_, i64>(0))?;
    stored.into_iter().next().ok_or_else(|| lost(owned))
}

/// `suspend.sql`: how it left the task, or `LostLease` (nothing changed).
fn suspend_task(conn: &Connection, owned: &HeldTask, wake: Wake) -> Result<Suspended> {
    let (wake_at, wake_after) = wake.params();
    let params: &Params<'_> = &[
        (":id", &owned.task_id),
        (":worker_id", &owned.worker_id),
        (":wake_at_ms", &wake_at),
        (":wake_after_ms", &wake_after),
        (":now", &now_ms()),
    ];
    let status = query(conn, SQL.suspend, params, |row| row.get::<_, String>(0))?;
    match status.first().map(String::as_str) {
        None => Err(lost(owned)),
        Some("canceled") => Ok(Suspended::Canceled),
        Some(_) => Ok(Suspended::Queued),
    }
}

fn child_state(conn: &Connection, child_id: &str) -> Result<Option<ChildState>> {
    let found = query(conn, SQL.child_state, &[(":child_id", &child_id)], |row| {
        Ok((status_at(row, 0)?, row.get(1)?, row.get(2)?))
    })?;
    Ok(found
        .into_iter()
        .next()
        .and_then(|(status, result, error)| {
            status.map(|status| ChildState {
                status,
                result,
                error,
            })
        }))
}

pub fn installed(conn: &Connection) -> Result<bool> {
    let found = query(conn, SQL.installed, &[], |row| row.get::<_, bool>(0))?;
    Ok(found.into_iter().next().unwrap_or(false))
}

/// Runs inside the writer's transaction (the write lock held), so two
/// processes installing at once create the table and its ledger row once.
pub fn install(conn: &Connection) -> Result<()> {
    apply_in_transaction(conn, &SQL.migration)
}

pub fn load(conn: &Connection, task_id: &str) -> Result<Vec<StoredStep>> {
    query(conn, SQL.load, &[(":task_id", &task_id)], stored_from_row)
}

pub fn summaries(conn: &Connection, task_id: &str) -> Result<Vec<StepSummary>> {
    query(
        conn,
        SQL.summaries,
        &[(":task_id", &task_id)],
        summary_from_row,
    )
}

/// `record` (when `step` is given), then `suspend.sql`, in the caller's
/// transaction. One clock reading for both: a sleep's stored wake time is
/// the time its task is due.
pub fn suspend(
    conn: &Connection,
    owned: &HeldTask,
    step: Option<NewStep>,
    wake: Wake,
) -> Result<Suspended> {
    let wake = match wake {
        Wake::After(ms) => Wake::At(now_ms().saturating_add(ms)),
        at => at,
    };
    if let Some(step) = step {
        let step = NewStep {
            wake: step.wake.map(|_| wake),
            ..step
        };
        record(conn, owned, &step)?;
    }
    suspend_task(conn, owned, wake)
}

/// `record` (when `step` is given), the child's state, and unless it has
/// finished `suspend.sql` for `recheck_ms`, in the caller's transaction
/// (the write lock held: no completion of the child slips in between).
pub fn wait_for_child(
    conn: &Connection,
    owned: &HeldTask,
    step: Option<&NewStep>,
    child_id: &str,
    recheck_ms: i64,
) -> Result<ChildWait> {
    if let Some(step) = step {
        record(conn, owned, step)?;
    }
    match child_state(conn, child_id)? {
        None => Ok(ChildWait::Gone),
        Some(child) if child.status.is_terminal() => Ok(ChildWait::Finished(child)),
        Some(_) => suspend_task(conn, owned, Wake::After(recheck_ms)).map(ChildWait::Suspended),
    }
}

pub fn wake_parents(conn: &Connection, child_ids: &[String]) -> Result<()> {
    let child_ids = json_list(child_ids);
    query(
        conn,
        SQL.wake_parents,
        &[(":child_ids", &child_ids), (":now", &now_ms())],
        |_| Ok(()),
    )
    .map(|_| ())
}
