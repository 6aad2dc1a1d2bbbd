//! The debounce follow-ups table's SQL, per dialect (docs/protocol.md,
//! "Debounced submit"): not a protocol migration but a table of this SDK's
//! own, created by the first follow-up under a ledger name the protocol's
//! runners ignore.

use super::Migration;

/// The ledger name of the follow-ups table: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know).
pub const LEDGER_NAME: &str = "node_followups_0001.sql";

/// The statements on `cairnq_followups`, one `.sql` file each.
#[derive(Debug)]
pub struct FollowupStatements {
    pub migration: Migration,
    pub installed: &'static str,
    pub held: &'static str,
    pub hold: &'static str,
    pub postpone: &'static str,
    pub release: &'static str,
    /// Whether a task recorded a step: on `cairnq_steps`, run only when that
    /// table exists.
    pub has_steps: &'static str,
}

macro_rules! load {
    ($dialect:literal) => {
        FollowupStatements {
            migration: Migration {
                name: LEDGER_NAME,
                sql: load!($dialect, "migration"),
            },
            installed: load!($dialect, "installed"),
            held: load!($dialect, "held"),
            hold: load!($dialect, "hold"),
            postpone: load!($dialect, "postpone"),
            release: load!($dialect, "release"),
            has_steps: load!($dialect, "has_steps"),
        }
    };
    ($dialect:literal, $file:literal) => {
        include_str!(concat!(
            "../../protocol/",
            $dialect,
            "/followups/",
            $file,
            ".sql"
        ))
    };
}

pub const SQLITE: FollowupStatements = load!("sqlite");
pub const POSTGRES: FollowupStatements = load!("postgres");

/// SQLite only: whether any follow-up is held back, read on a reader before
/// `release` (which takes the write lock).
pub const SQLITE_PENDING: &str = load!("sqlite", "pending");

/// SQLite only: `release`'s second statement (Postgres deletes the rows in
/// `release` itself), the rows of the follow-ups it released.
pub const SQLITE_FORGET: &str = load!("sqlite", "forget");
