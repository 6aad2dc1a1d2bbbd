//! What the events statements take and answer (docs/protocol.md, "Events"),
//! run by each dialect's `events.rs` (its `EventBackend`), and the one
//! decision a retention sweep makes inside its transaction.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

use crate::error::{Error, Result};

/// Where an event sits in the log: `(major, minor)` in order. SQLite's
/// major is 0 and its minor the row's seq; Postgres' major is the writing
/// transaction's id. Shown as `minor` or `major:minor`, the text `after`
/// takes back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub major: i64,
    pub minor: i64,
}

impl Position {
    /// Before every event: where a subscription from the start reads on.
    pub const START: Position = Position { major: 0, minor: 0 };

    pub fn new(major: i64, minor: i64) -> Position {
        Position { major, minor }
    }

    /// A position's text as `after` receives it, refused naming the field.
    pub fn parse(text: &str) -> Result<Position> {
        let refuse = || {
            Error::Invalid(format!(
                "after must be an event position (such as \"42\" or \"771:42\"), got {text:?}"
            ))
        };
        let number = |part: &str| {
            (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse::<i64>().ok())
                .flatten()
                .ok_or_else(refuse)
        };
        match text.split_once(':') {
            Some((major, minor)) => Ok(Position::new(number(major)?, number(minor)?)),
            None => Ok(Position::new(0, number(text)?)),
        }
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.major {
            0 => write!(f, "{}", self.minor),
            major => write!(f, "{major}:{}", self.minor),
        }
    }
}

/// The filters of a subscription, each `None` when absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventFilter {
    pub queue: Option<String>,
    pub name: Option<String>,
    pub task_id: Option<String>,
}

/// One stored event, as the page statement reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    pub position: Position,
    pub at_ms: i64,
    pub task_id: String,
    pub queue: String,
    pub name: String,
    pub kind: String,
    pub attempt: i64,
    pub worker_id: Option<String>,
    pub run_at_ms: Option<i64>,
    pub progress: Option<f64>,
    pub message: Option<String>,
    /// A success's result (unless too large) or a failure's error, as JSON text.
    pub body: Option<String>,
    /// A success's result size in bytes.
    pub body_bytes: Option<i64>,
}

/// One read of the log: the events after a position (at most the limit),
/// the newest final position (the read's end when fewer came), the last
/// position retention deleted, and whether committed events are not final
/// yet (Postgres: an older transaction is still running).
#[derive(Clone, Debug, Default)]
pub struct RawPage {
    pub rows: Vec<EventRow>,
    pub head: Option<Position>,
    pub horizon: Option<Position>,
    pub pending: bool,
}

/// What the metrics show of a store's event subscriptions.
#[derive(Debug, Default)]
pub struct EventCounters {
    delivered: AtomicU64,
    listeners: AtomicU64,
}

impl EventCounters {
    /// Events handed to subscribers so far, gaps not counted.
    pub fn delivered(&self) -> u64 {
        self.delivered.load(SeqCst)
    }

    /// Subscriptions open now.
    pub fn listeners(&self) -> u64 {
        self.listeners.load(SeqCst)
    }

    pub fn add_delivered(&self, count: u64) {
        self.delivered.fetch_add(count, SeqCst);
    }

    pub fn opened(&self) {
        self.listeners.fetch_add(1, SeqCst);
    }

    pub fn closed(&self) {
        self.listeners.fetch_sub(1, SeqCst);
    }
}

/// Where a sweep cuts: before the first event young enough to keep (every
/// event, when none is, but the newest: SQLite would reuse its seq), or
/// before the first of the newest ones kept by count, whichever is later.
/// `None`: nothing to delete.
pub fn sweep_cut(
    first_young: Option<Position>,
    first_kept_by_count: Option<Position>,
    newest: Option<Position>,
) -> Option<Position> {
    let newest = newest?;
    let by_age = first_young.unwrap_or(newest);
    let cut = match first_kept_by_count {
        Some(by_count) => by_age.max(by_count),
        None => by_age,
    };
    Some(cut.min(newest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_read_back_as_shown() {
        for text in ["0", "42", "771:42"] {
            assert_eq!(Position::parse(text).unwrap().to_string(), text);
        }
        assert!(Position::new(1, 0) > Position::new(0, 99));
        for bad in ["", "x", "-1", "1:", ":2", "1:2:3", " 1", "1.5"] {
            let err = Position::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains("after must be an event position"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn a_sweep_cuts_at_the_later_bound_and_keeps_the_newest() {
        let p = |n| Some(Position::new(0, n));
        assert_eq!(sweep_cut(p(5), p(8), p(10)), p(8));
        assert_eq!(sweep_cut(p(9), p(8), p(10)), p(9));
        assert_eq!(sweep_cut(None, None, p(10)), p(10));
        assert_eq!(sweep_cut(p(1), None, p(10)), p(1));
        assert_eq!(sweep_cut(None, None, None), None);
    }
}
