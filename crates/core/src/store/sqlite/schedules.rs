//! The schedules statements on SQLite (docs/protocol.md, "Schedules"): the
//! table created on first use in a write transaction, and every other
//! statement run as it is given.

use async_trait::async_trait;
use rusqlite::types::Value;
use rusqlite::Connection;

use super::conn::{apply_in_transaction, feature_installed, sqlite_error};
use super::lifecycle::SqliteBackend;
use super::query::{key_at, Cells};
use super::rows::json_list;
use crate::error::Result;
use crate::protocol::schedules::{SQLITE as SQL, SQLITE_CONTROLS};
use crate::schedule::backend::ScheduleBackend;
use crate::schedule::rows::{PickStatement, ScheduleRow, ScheduleRows, SqlArg, SCHEDULES_TABLE};
use crate::store::bad_rows::BadRow;

/// The rows the statement answers; one another program wrote in a shape
/// this SDK cannot read is a `BadRow` in its place.
fn rows(conn: &Connection, pick: PickStatement, args: &[SqlArg]) -> Result<ScheduleRows> {
    let values = args.iter().map(|arg| match arg {
        SqlArg::Int(v) => Value::Integer(*v),
        SqlArg::OptInt(v) => v.map_or(Value::Null, Value::Integer),
        SqlArg::Text(v) => Value::Text(v.clone()),
        SqlArg::Texts(v) => Value::Text(json_list(v)),
    });
    let mut stmt = conn.prepare_cached(pick(&SQL)).map_err(sqlite_error)?;
    let found = stmt
        .query_map(rusqlite::params_from_iter(values), |row| {
            Ok(schedule_from_row(&Cells::new(
                row,
                SCHEDULES_TABLE,
                key_at(row, 0),
            )))
        })
        .map_err(sqlite_error)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sqlite_error)?;
    Ok(found)
}

fn schedule_from_row(row: &Cells<'_, '_>) -> std::result::Result<ScheduleRow, BadRow> {
    Ok(ScheduleRow {
        name: row.get(0, "name")?,
        task_name: row.get(1, "task_name")?,
        cron: row.get(2, "cron")?,
        tz: row.get(3, "tz")?,
        queue: row.get(4, "queue")?,
        payload: row.get(5, "payload")?,
        metadata: row.get(6, "metadata")?,
        priority: row.int(7, "priority")?,
        max_attempts: row.int(8, "max_attempts")?,
        catch_up: row.get(9, "catch_up")?,
        paused: row.int(10, "paused")? != 0,
        next_run_at_ms: row.int(11, "next_run_at_ms")?,
        last_run_at_ms: row.opt_int(12, "last_run_at_ms")?,
        created_at_ms: row.int(13, "created_at_ms")?,
        updated_at_ms: row.int(14, "updated_at_ms")?,
        overlap: row.get(15, "overlap")?,
        every_ms: row.opt_int(16, "every_ms")?,
        start_at_ms: row.opt_int(17, "start_at_ms")?,
        end_at_ms: row.opt_int(18, "end_at_ms")?,
        run_limit: row.opt_int(19, "run_limit")?,
        fired_count: row.int(20, "fired_count")?,
        skipped_count: row.int(21, "skipped_count")?,
        last_skipped_at_ms: row.opt_int(22, "last_skipped_at_ms")?,
    })
}

#[async_trait]
impl ScheduleBackend for SqliteBackend {
    async fn schedules_installed(&self) -> Result<bool> {
        self.read(|conn| feature_installed(conn, SQL.installed))
            .await
    }

    async fn schedule_controls_installed(&self) -> Result<bool> {
        self.read(|conn| feature_installed(conn, SQL.controls_installed))
            .await
    }

    async fn install_schedules(&self) -> Result<()> {
        self.transaction(|conn| {
            apply_in_transaction(conn, &SQL.migration)?;
            apply_in_transaction(conn, &SQLITE_CONTROLS)
        })
        .await
    }

    async fn schedule_read(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows> {
        self.read(move |conn| rows(conn, pick, &args)).await
    }

    async fn schedule_write(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows> {
        self.write(move |conn| rows(conn, pick, &args)).await
    }
}
