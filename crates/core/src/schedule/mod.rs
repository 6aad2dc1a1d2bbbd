//! Recurring tasks (docs/api.md, "Schedules"; docs/protocol.md, "Schedules"):
//! a schedule is a row of `cairnq_schedules`, a table created on first use;
//! every worker whose queues include a schedule's queue fires it, and each
//! occurrence becomes one ordinary task whose key names the schedule and the
//! occurrence, so any number of workers make exactly one task per occurrence
//! with no leader.
//!
//! `cron` holds the time math, `spec` the input checks, `fire` the firing
//! step (its clock injected), `clock` a worker's loop around it.

pub mod clock;
pub mod cron;
pub mod fire;
pub mod spec;

use serde_json::{json, Value};

use self::cron::Occurrences;
use self::spec::ScheduleSpec;
use crate::error::Result;
use crate::ids::now_ms;
use crate::store::bad_rows::readable;
use crate::store::{ScheduleRow, ScheduleRows, SqlArg, Store};

/// The metadata key under which a fired task records its schedule and
/// occurrence: `{"name": …, "occurrenceAtMs": …}`.
pub use crate::store::reserved::OCCURRENCE_METADATA_KEY as METADATA_KEY;

/// The key of the task an occurrence becomes.
pub fn occurrence_key(schedule: &str, occurrence_ms: i64) -> String {
    format!("cairnq:schedule:{schedule}:{occurrence_ms}")
}

impl Store {
    /// `client.schedule(name, options)`: checks everything, then creates the
    /// table if this database has none yet, then inserts or updates the
    /// schedule in place. `spec_json` as `ScheduleSpec::parse` reads it.
    pub async fn schedule(&self, spec_json: &str) -> Result<ScheduleRow> {
        self.schedule_at(spec_json, now_ms()).await
    }

    /// `schedule` as of `now` (epoch ms).
    pub async fn schedule_at(&self, spec_json: &str, now: i64) -> Result<ScheduleRow> {
        let spec = ScheduleSpec::parse(spec_json)?;
        let next = spec.occurrences.next_after(now)?;
        self.backend().install_schedules().await?;
        let args = vec![
            SqlArg::Text(spec.name),
            SqlArg::Text(spec.task),
            SqlArg::Text(spec.cron),
            SqlArg::Text(spec.tz),
            SqlArg::Text(spec.queue),
            SqlArg::Text(spec.payload),
            SqlArg::Text(spec.metadata),
            SqlArg::Int(spec.priority),
            SqlArg::Int(spec.max_attempts),
            SqlArg::Text(spec.catch_up.as_str().into()),
            SqlArg::Int(next),
            SqlArg::Int(now),
        ];
        let mut rows = self.backend().schedule_write(|s| s.upsert, args).await?;
        self.schedule_changes().notify_waiters();
        // A row another program broke keeps its creation time and last run.
        Ok(rows.pop().expect("an upsert returns its row")?)
    }

    /// `client.schedules()`: every schedule by name; none (and nothing
    /// created) on a database that never had one.
    pub async fn schedules(&self) -> Result<Vec<ScheduleRow>> {
        if !self.backend().schedules_installed().await? {
            return Ok(Vec::new());
        }
        let rows = self.backend().schedule_read(|s| s.list, Vec::new()).await?;
        Ok(readable(rows))
    }

    /// `client.pauseSchedule(name)`: the schedule, or `None` when there is
    /// no schedule of that name.
    pub async fn pause_schedule(&self, name: &str, now: i64) -> Result<Option<ScheduleRow>> {
        self.change(
            |s| s.pause,
            vec![SqlArg::Text(name.into()), SqlArg::Int(now)],
        )
        .await
    }

    /// `client.resumeSchedule(name)`: a paused schedule starts again from its
    /// next occurrence after `now`.
    pub async fn resume_schedule(&self, name: &str, now: i64) -> Result<Option<ScheduleRow>> {
        let Some(current) = self.schedule_named(name).await? else {
            return Ok(None);
        };
        let next = Occurrences::parse(&current.cron, &current.tz)?.next_after(now)?;
        let args = vec![
            SqlArg::Text(name.into()),
            SqlArg::Int(next),
            SqlArg::Int(now),
        ];
        self.change(|s| s.resume, args).await
    }

    /// `client.unschedule(name)`: the schedule removed, or `None`. Tasks it
    /// fired stay.
    pub async fn unschedule(&self, name: &str) -> Result<Option<ScheduleRow>> {
        self.change(|s| s.delete, vec![SqlArg::Text(name.into())])
            .await
    }

    pub async fn schedule_named(&self, name: &str) -> Result<Option<ScheduleRow>> {
        if !self.backend().schedules_installed().await? {
            return Ok(None);
        }
        let rows = self
            .backend()
            .schedule_read(|s| s.get, vec![SqlArg::Text(name.into())])
            .await?;
        Ok(first(rows))
    }

    /// A write to one schedule by name; nothing (and nothing created) where
    /// the table does not exist.
    async fn change(
        &self,
        pick: crate::store::PickStatement,
        args: Vec<SqlArg>,
    ) -> Result<Option<ScheduleRow>> {
        if !self.backend().schedules_installed().await? {
            return Ok(None);
        }
        let row = first(self.backend().schedule_write(pick, args).await?);
        self.schedule_changes().notify_waiters();
        Ok(row)
    }
}

/// The one row a statement on one schedule answers, if it can be read.
fn first(rows: ScheduleRows) -> Option<ScheduleRow> {
    readable(rows).into_iter().next()
}

/// A schedule as the API shows it (docs/api.md, "Schedules"): JSON text.
pub fn schedule_to_json(row: &ScheduleRow) -> String {
    let raw = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    json!({
        "name": row.name,
        "task": row.task_name,
        "cron": row.cron,
        "tz": row.tz,
        "queue": row.queue,
        "payload": raw(&row.payload),
        "metadata": raw(&row.metadata),
        "priority": row.priority,
        "maxAttempts": row.max_attempts,
        "catchUp": row.catch_up,
        "paused": row.paused,
        "nextRunAtMs": row.next_run_at_ms,
        "lastRunAtMs": row.last_run_at_ms,
        "createdAtMs": row.created_at_ms,
        "updatedAtMs": row.updated_at_ms,
    })
    .to_string()
}

/// Several schedules as one JSON array.
pub fn schedules_to_json(rows: &[ScheduleRow]) -> String {
    let items: Vec<String> = rows.iter().map(schedule_to_json).collect();
    format!("[{}]", items.join(","))
}
