//! Recurring tasks (docs/api.md, "Schedules"; docs/protocol.md, "Schedules"):
//! a schedule is a row of `cairnq_schedules`, a table created on first use;
//! every worker whose queues include a schedule's queue fires it, and each
//! occurrence becomes one ordinary task whose key names the schedule and the
//! occurrence, so any number of workers make exactly one task per occurrence
//! with no leader.
//!
//! `cron` holds the time math, `spec` the input checks, `fire` the firing
//! step (its clock injected), `clock` a worker's loop around it; `backend`
//! the seam each dialect's `schedules.rs` implements, `rows` what its
//! statements take and answer.

pub mod backend;
pub mod clock;
pub mod cron;
pub mod fire;
pub mod recurrence;
pub mod rows;
pub mod spec;

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use self::recurrence::Recurrence;
use self::spec::ScheduleSpec;
use crate::error::{Error, Result};
use crate::schedule::rows::{ScheduleRow, ScheduleRows, SqlArg};
use crate::store::bad_rows::readable;
use crate::store::{Store, SubmitInput, Write};
use crate::task::Task;

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
        self.schedule_at(spec_json, self.clock().now_ms()).await
    }

    /// `schedule` as of `now` (epoch ms).
    pub async fn schedule_at(&self, spec_json: &str, now: i64) -> Result<ScheduleRow> {
        let spec = ScheduleSpec::parse(spec_json)?;
        let next = spec.recurrence.first(spec.start_at_ms, now)?;
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
            SqlArg::Text(spec.overlap.as_str().into()),
            SqlArg::OptInt(spec.every_ms),
            SqlArg::OptInt(spec.start_at_ms),
            SqlArg::OptInt(spec.end_at_ms),
            SqlArg::OptInt(spec.limit),
        ];
        let mut rows = self.backend().schedule_write(|s| s.upsert, args).await?;
        self.schedule_changes().notify_waiters();
        // A row another program broke keeps its creation time and last run.
        Ok(rows.pop().expect("an upsert returns its row")?)
    }

    /// Whether this database has the schedules table: then its controls are
    /// applied too, the first time this store finds them missing (a table an
    /// earlier version created), before any statement reads them.
    pub async fn schedules_ready(&self) -> Result<bool> {
        let ready = self.schedules_ready_flag();
        if ready.load(Ordering::Acquire) {
            return Ok(true);
        }
        if !self.backend().schedules_installed().await? {
            return Ok(false);
        }
        if !self.backend().schedule_controls_installed().await? {
            self.backend().install_schedules().await?;
        }
        ready.store(true, Ordering::Release);
        Ok(true)
    }

    /// `client.schedules()`: every schedule by name; none (and nothing
    /// created) on a database that never had one.
    pub async fn schedules(&self) -> Result<Vec<ScheduleRow>> {
        if !self.schedules_ready().await? {
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
        let recurrence = Recurrence::of(&current.cron, &current.tz, current.every_ms)?;
        let after = current.start_at_ms.map_or(now, |start| now.max(start - 1));
        let next = recurrence.next_after(current.next_run_at_ms, after)?;
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

    /// `client.triggerSchedule(name)`: one task of the schedule now, its
    /// pending occurrence left where it is. It runs whatever the overlap
    /// (a trigger is a person asking), and counts toward no limit; its
    /// `ctx.schedule` says `triggered: true`. An unknown name is
    /// `NoSuchSchedule`, nothing written.
    pub async fn trigger_schedule(&self, name: &str, now: i64) -> Result<Task> {
        let Some(row) = self.schedule_named(name).await? else {
            return Err(Error::NoSuchSchedule { name: name.into() });
        };
        let origin = json!({ "name": row.name, "occurrenceAtMs": now, "triggered": true });
        // No key: a trigger is no occurrence.
        let task = schedule_task(&row, origin, None);
        let mut written = self.write_group(vec![Ok(Write::OwnSubmit(task))]).await;
        let answer = written.pop().expect("one write, one answer")?;
        Ok(answer.expect("a submit answers its task"))
    }

    pub async fn schedule_named(&self, name: &str) -> Result<Option<ScheduleRow>> {
        if !self.schedules_ready().await? {
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
        pick: crate::schedule::rows::PickStatement,
        args: Vec<SqlArg>,
    ) -> Result<Option<ScheduleRow>> {
        if !self.schedules_ready().await? {
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
        "cron": row.every_ms.is_none().then_some(&row.cron),
        "every": row.every_ms,
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
        "overlap": row.overlap,
        "startAtMs": row.start_at_ms,
        "endAtMs": row.end_at_ms,
        "limit": row.run_limit,
        "firedCount": row.fired_count,
        "skippedCount": row.skipped_count,
        "lastSkippedAtMs": row.last_skipped_at_ms,
        "finished": finished(row),
    })
    .to_string()
}

/// Whether a schedule fires no more: its pending occurrence is past its end,
/// or it fired its limit.
pub fn finished(row: &ScheduleRow) -> bool {
    row.end_at_ms.is_some_and(|end| row.next_run_at_ms > end)
        || row.run_limit.is_some_and(|limit| row.fired_count >= limit)
}

/// The submit of a task of `row`: its task, payload and options, its
/// metadata plus `origin` under `METADATA_KEY`.
fn schedule_task(row: &ScheduleRow, origin: Value, key: Option<String>) -> SubmitInput {
    let mut metadata: serde_json::Map<String, Value> =
        serde_json::from_str(&row.metadata).unwrap_or_default();
    metadata.insert(METADATA_KEY.into(), origin);
    SubmitInput {
        name: row.task_name.clone(),
        payload: Some(row.payload.clone()),
        queue: Some(row.queue.clone()),
        key,
        max_attempts: Some(row.max_attempts as f64),
        priority: Some(row.priority as f64),
        metadata: Some(Value::Object(metadata).to_string()),
        ..SubmitInput::default()
    }
}

/// Several schedules as one JSON array.
pub fn schedules_to_json(rows: &[ScheduleRow]) -> String {
    let items: Vec<String> = rows.iter().map(schedule_to_json).collect();
    format!("[{}]", items.join(","))
}
