//! The schedules statements on SQLite (docs/protocol.md, "Schedules"): the
//! table created on first use in a write transaction, and every other
//! statement run as it is given.

use rusqlite::types::Value;
use rusqlite::{Connection, Row};

use super::conn::{apply_in_transaction, sqlite_error};
use super::rows::json_list;
use crate::error::Result;
use crate::protocol::schedules::SQLITE as SQL;
use crate::store::schedule_rows::{PickStatement, ScheduleRow, SqlArg};

pub fn installed(conn: &Connection) -> Result<bool> {
    conn.query_row(SQL.installed, [], |row| row.get(0))
        .map_err(sqlite_error)
}

/// Runs inside the writer's transaction (the write lock held), so two
/// processes installing at once create the table and its ledger row once.
pub fn install(conn: &Connection) -> Result<()> {
    apply_in_transaction(conn, &SQL.migration)
}

pub fn rows(conn: &Connection, pick: PickStatement, args: &[SqlArg]) -> Result<Vec<ScheduleRow>> {
    let values = args.iter().map(|arg| match arg {
        SqlArg::Int(v) => Value::Integer(*v),
        SqlArg::Text(v) => Value::Text(v.clone()),
        SqlArg::Texts(v) => Value::Text(json_list(v)),
    });
    let mut stmt = conn.prepare_cached(pick(&SQL)).map_err(sqlite_error)?;
    let found = stmt
        .query_map(rusqlite::params_from_iter(values), schedule_from_row)
        .map_err(sqlite_error)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sqlite_error)?;
    Ok(found)
}

fn schedule_from_row(row: &Row<'_>) -> rusqlite::Result<ScheduleRow> {
    Ok(ScheduleRow {
        name: row.get(0)?,
        task_name: row.get(1)?,
        cron: row.get(2)?,
        tz: row.get(3)?,
        queue: row.get(4)?,
        payload: row.get(5)?,
        metadata: row.get(6)?,
        priority: row.get(7)?,
        max_attempts: row.get(8)?,
        catch_up: row.get(9)?,
        paused: row.get::<_, i64>(10)? != 0,
        next_run_at_ms: row.get(11)?,
        last_run_at_ms: row.get(12)?,
        created_at_ms: row.get(13)?,
        updated_at_ms: row.get(14)?,
    })
}
