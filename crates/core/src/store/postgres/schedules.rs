//! The schedules statements on Postgres (docs/protocol.md, "Schedules"),
//! over any transport: the table created on first use as a migration is
//! applied, and every other statement run as it is given.

use async_trait::async_trait;

use super::conn::{feature_installed, install_feature};
use super::lifecycle::PostgresBackend;
use super::listener::PushSource;
use super::transport::{Param, PgRow, Session, Transport};
use crate::error::{Error, Result};
use crate::protocol::schedules::{POSTGRES as SQL, POSTGRES_CONTROLS};
use crate::schedule::backend::ScheduleBackend;
use crate::schedule::rows::{PickStatement, ScheduleRow, ScheduleRows, SqlArg, SCHEDULES_TABLE};
use crate::store::bad_rows::BadRow;

/// The rows the statement answers; one another program wrote in a shape
/// this SDK cannot read is a `BadRow` in its place.
async fn rows<S: Session>(
    session: &S,
    pick: PickStatement,
    args: &[SqlArg],
) -> Result<ScheduleRows> {
    let params: Vec<Param<'_>> = args
        .iter()
        .map(|arg| match arg {
            SqlArg::Int(v) => Param::Int(*v),
            SqlArg::OptInt(v) => v.map_or(Param::Null, Param::Int),
            SqlArg::Text(v) => Param::Text(v),
            SqlArg::Texts(v) => Param::Texts(v),
        })
        .collect();
    Ok(session
        .query(pick(&SQL), &params)
        .await?
        .iter()
        .map(schedule_from_row)
        .collect())
}

fn schedule_from_row<R: PgRow>(row: &R) -> std::result::Result<ScheduleRow, BadRow> {
    let key = row.text(0).unwrap_or_default();
    let at = |column: &'static str| {
        let key = key.clone();
        move |err: Error| BadRow {
            table: SCHEDULES_TABLE,
            key,
            column,
            why: err.to_string(),
        }
    };
    Ok(ScheduleRow {
        name: row.text(0).map_err(at("name"))?,
        task_name: row.text(1).map_err(at("task_name"))?,
        cron: row.text(2).map_err(at("cron"))?,
        tz: row.text(3).map_err(at("tz"))?,
        queue: row.text(4).map_err(at("queue"))?,
        payload: row.text(5).map_err(at("payload"))?,
        metadata: row.text(6).map_err(at("metadata"))?,
        priority: row.int(7).map_err(at("priority"))?,
        max_attempts: row.int(8).map_err(at("max_attempts"))?,
        catch_up: row.text(9).map_err(at("catch_up"))?,
        paused: row.int(10).map_err(at("paused"))? != 0,
        next_run_at_ms: row.int(11).map_err(at("next_run_at_ms"))?,
        last_run_at_ms: row.opt_int(12).map_err(at("last_run_at_ms"))?,
        created_at_ms: row.int(13).map_err(at("created_at_ms"))?,
        updated_at_ms: row.int(14).map_err(at("updated_at_ms"))?,
        overlap: row.text(15).map_err(at("overlap"))?,
        every_ms: row.opt_int(16).map_err(at("every_ms"))?,
        start_at_ms: row.opt_int(17).map_err(at("start_at_ms"))?,
        end_at_ms: row.opt_int(18).map_err(at("end_at_ms"))?,
        run_limit: row.opt_int(19).map_err(at("run_limit"))?,
        fired_count: row.int(20).map_err(at("fired_count"))?,
        skipped_count: row.int(21).map_err(at("skipped_count"))?,
        last_skipped_at_ms: row.opt_int(22).map_err(at("last_skipped_at_ms"))?,
    })
}

/// Both kinds of statement run autocommit on a pooled connection.
#[async_trait]
impl<T: Transport + PushSource> ScheduleBackend for PostgresBackend<T> {
    async fn schedules_installed(&self) -> Result<bool> {
        feature_installed(&self.client().await?, SQL.installed).await
    }

    async fn schedule_controls_installed(&self) -> Result<bool> {
        feature_installed(&self.client().await?, SQL.controls_installed).await
    }

    async fn install_schedules(&self) -> Result<()> {
        install_feature(self.begin().await?, &SQL.migration).await?;
        install_feature(self.begin().await?, &POSTGRES_CONTROLS).await
    }

    async fn schedule_read(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows> {
        rows(&self.client().await?, pick, &args).await
    }

    async fn schedule_write(&self, pick: PickStatement, args: Vec<SqlArg>) -> Result<ScheduleRows> {
        rows(&self.client().await?, pick, &args).await
    }
}
