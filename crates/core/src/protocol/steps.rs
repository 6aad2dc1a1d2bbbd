//! The steps table's SQL, per dialect (docs/protocol.md, "Durable steps"):
//! not a protocol migration but a table of this SDK's own, created on first
//! use under a ledger name the protocol's runners ignore.

use super::Migration;

/// The ledger name of the steps table: no protocol number, so no other SDK's
/// runner knows it (runners ignore names they do not know), and no future
/// protocol migration can take it.
pub const LEDGER_NAME: &str = "node_steps_0001.sql";

/// The statements on `cairnq_steps`, one `.sql` file each.
#[derive(Debug)]
pub struct StepStatements {
    pub migration: Migration,
    pub installed: &'static str,
    pub load: &'static str,
    pub summaries: &'static str,
    pub record: &'static str,
    pub suspend: &'static str,
    pub child_state: &'static str,
    pub wake_parents: &'static str,
}

macro_rules! load {
    ($dialect:literal) => {
        StepStatements {
            migration: Migration {
                name: LEDGER_NAME,
                sql: load!($dialect, "migration"),
            },
            installed: load!($dialect, "installed"),
            load: load!($dialect, "load"),
            summaries: load!($dialect, "summaries"),
            record: load!($dialect, "record"),
            suspend: load!($dialect, "suspend"),
            child_state: load!($dialect, "child_state"),
            wake_parents: load!($dialect, "wake_parents"),
        }
    };
    ($dialect:literal, $file:literal) => {
        include_str!(concat!(
            "../../protocol/",
            $dialect,
            "/steps/",
            $file,
            ".sql"
        ))
    };
}

pub const SQLITE: StepStatements = load!("sqlite");
pub const POSTGRES: StepStatements = load!("postgres");
