//! The schedules statements on Postgres (docs/protocol.md, "Schedules"),
//! over any transport: the table created on first use as a migration is
//! applied, and every other statement run as it is given.

use super::conn::apply;
use super::transport::{end_tx, Param, PgRow, Session, Transaction};
use crate::error::Result;
use crate::protocol::schedules::POSTGRES as SQL;
use crate::store::schedule_rows::{PickStatement, ScheduleRow, SqlArg};

pub async fn installed<S: Session>(session: &S) -> Result<bool> {
    match session.query(SQL.installed, &[]).await?.first() {
        Some(row) => row.bool(0),
        None => Ok(false),
    }
}

/// Under the ledger's exclusive lock, so two processes installing at once
/// create the table and its ledger row once.
pub async fn install<X: Transaction>(tx: X) -> Result<()> {
    let applied = apply(&tx, &SQL.migration).await;
    end_tx(tx, applied).await
}

pub async fn rows<S: Session>(
    session: &S,
    pick: PickStatement,
    args: &[SqlArg],
) -> Result<Vec<ScheduleRow>> {
    let params: Vec<Param<'_>> = args
        .iter()
        .map(|arg| match arg {
            SqlArg::Int(v) => Param::Int(*v),
            SqlArg::Text(v) => Param::Text(v),
            SqlArg::Texts(v) => Param::Texts(v),
        })
        .collect();
    session
        .query(pick(&SQL), &params)
        .await?
        .iter()
        .map(schedule_from_row)
        .collect()
}

fn schedule_from_row<R: PgRow>(row: &R) -> Result<ScheduleRow> {
    Ok(ScheduleRow {
        name: row.text(0)?,
        task_name: row.text(1)?,
        cron: row.text(2)?,
        tz: row.text(3)?,
        queue: row.text(4)?,
        payload: row.text(5)?,
        metadata: row.text(6)?,
        priority: row.int(7)?,
        max_attempts: row.int(8)?,
        catch_up: row.text(9)?,
        paused: row.int(10)? != 0,
        next_run_at_ms: row.int(11)?,
        last_run_at_ms: row.opt_int(12)?,
        created_at_ms: row.int(13)?,
        updated_at_ms: row.int(14)?,
    })
}
