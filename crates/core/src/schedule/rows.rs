//! What a backend hands the schedule module: rows of
//! `cairnq_schedules` and the values its statements bind. The decisions
//! (validation, time math, firing) stay in that module, written once
//! for both dialects; a backend only runs the statement it is given.

use crate::protocol::schedules::ScheduleStatements;
use crate::store::bad_rows::BadRow;

/// The table, as reports of its rows name it.
pub const SCHEDULES_TABLE: &str = "cairnq_schedules";

/// What a schedules statement answers: each row, or the `BadRow` another
/// program's write made of it.
pub type ScheduleRows = Vec<Result<ScheduleRow, BadRow>>;

/// One value bound to a schedules statement, by position (`?n` / `$n`).
#[derive(Clone, Debug, PartialEq)]
pub enum SqlArg {
    Int(i64),
    /// An integer or SQL `null`.
    OptInt(Option<i64>),
    Text(String),
    /// A list of texts: a JSON array on SQLite (read with `json_each`), a
    /// `text[]` on Postgres.
    Texts(Vec<String>),
}

/// Picks one statement of a dialect's schedule statements.
pub type PickStatement = fn(&ScheduleStatements) -> &'static str;

/// A row of `cairnq_schedules`, columns in table order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleRow {
    pub name: String,
    pub task_name: String,
    pub cron: String,
    pub tz: String,
    pub queue: String,
    /// JSON text.
    pub payload: String,
    /// JSON text of an object.
    pub metadata: String,
    pub priority: i64,
    pub max_attempts: i64,
    pub catch_up: String,
    pub paused: bool,
    /// The pending occurrence: the next one to fire.
    pub next_run_at_ms: i64,
    /// The latest occurrence fired, if any.
    pub last_run_at_ms: Option<i64>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// `"allow"` or `"skip"`.
    pub overlap: String,
    /// An interval schedule's period (its `cron` is then empty).
    pub every_ms: Option<i64>,
    pub start_at_ms: Option<i64>,
    pub end_at_ms: Option<i64>,
    /// The occurrences it fires at most.
    pub run_limit: Option<i64>,
    pub fired_count: i64,
    pub skipped_count: i64,
    pub last_skipped_at_ms: Option<i64>,
}
