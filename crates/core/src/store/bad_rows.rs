//! Rows of this SDK's own tables (schedules, steps, flow limits) that another
//! program wrote in a shape the core cannot read (docs/security.md, "Rows
//! written by others"): each is skipped where skipping loses nothing, and
//! reported once per process, naming its table, key and column, so one bad
//! row never stops the reads and firings of the others.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crate::error::Error;

/// Where a report goes: the bindings hand it to `process.emitWarning`.
pub type BadRowSink = Arc<dyn Fn(String) + Send + Sync>;

/// A row the core could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRow {
    pub table: &'static str,
    /// The row's key (a schedule's name, a step's task and step ids, a task
    /// name), as stored.
    pub key: String,
    pub column: &'static str,
    /// What the column holds instead of what the core reads.
    pub why: String,
}

impl fmt::Display for BadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug quoting escapes control characters: the key is another
        // program's text, and reports reach terminals.
        write!(
            f,
            "a row of {} cannot be read: key {:?}, column {}: {}",
            self.table, self.key, self.column, self.why
        )
    }
}

impl From<BadRow> for Error {
    /// Where a row cannot be skipped (a run replaying its steps, the row a
    /// write answers), the call fails naming it.
    fn from(bad: BadRow) -> Error {
        Error::Invalid(bad.to_string())
    }
}

#[derive(Default)]
struct Reports {
    seen: Mutex<HashSet<(&'static str, String, &'static str)>>,
    sink: RwLock<Option<BadRowSink>>,
}

fn reports() -> &'static Reports {
    static REPORTS: OnceLock<Reports> = OnceLock::new();
    REPORTS.get_or_init(Reports::default)
}

/// Send every later report to `sink` (the first one set stays: every store
/// of a process reports the same way).
pub fn set_sink(sink: BadRowSink) {
    let mut current = reports().sink.write().expect("bad-row sink");
    if current.is_none() {
        *current = Some(sink);
    }
}

/// Report `bad` unless this process already reported that table, key and
/// column.
pub fn report(bad: &BadRow) {
    let fresh = reports().seen.lock().expect("bad-row reports").insert((
        bad.table,
        bad.key.clone(),
        bad.column,
    ));
    if !fresh {
        return;
    }
    if let Some(sink) = reports().sink.read().expect("bad-row sink").as_ref() {
        sink(format!("cairnq: {bad}; skipped"));
    }
}

/// The rows that could be read, each other one reported.
pub fn readable<T>(rows: Vec<Result<T, BadRow>>) -> Vec<T> {
    rows.into_iter()
        .filter_map(|row| row.map_err(|bad| report(&bad)).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_row_is_reported_once_with_its_key_escaped() {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let into = heard.clone();
        set_sink(Arc::new(move |message| into.lock().unwrap().push(message)));
        let bad = BadRow {
            table: "cairnq_schedules",
            key: "nightly\u{1b}[2J".into(),
            column: "next_run_at_ms",
            why: "holds TEXT \"soon\"".into(),
        };
        let rows = vec![Ok(1), Err(bad.clone()), Ok(2), Err(bad)];
        assert_eq!(readable(rows), vec![1, 2]);
        let heard = heard.lock().unwrap();
        assert_eq!(
            *heard,
            vec!["cairnq: a row of cairnq_schedules cannot be read: key \"nightly\\u{1b}[2J\", column next_run_at_ms: holds TEXT \"soon\"; skipped".to_string()]
        );
    }
}
