//! The schedules table's SQL, per dialect (docs/protocol.md, "Schedules"):
//! not a protocol migration but a table of this SDK's own, created on first
//! use under a ledger name the protocol's runners ignore.

use super::Migration;

/// The ledger name of the schedules table: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know), and no
/// future protocol migration can take it.
pub const LEDGER_NAME: &str = "node_schedules_0001.sql";

/// The statements on `cairnq_schedules`, one `.sql` file each; every one that
/// answers rows answers whole rows (`select *` / `returning *`).
#[derive(Debug)]
pub struct ScheduleStatements {
    pub migration: Migration,
    pub installed: &'static str,
    pub upsert: &'static str,
    pub list: &'static str,
    pub get: &'static str,
    pub pause: &'static str,
    pub resume: &'static str,
    pub delete: &'static str,
    pub due: &'static str,
    pub next_due: &'static str,
    pub advance: &'static str,
}

macro_rules! load {
    ($dialect:literal) => {
        ScheduleStatements {
            migration: Migration {
                name: LEDGER_NAME,
                sql: include_str!(concat!(
                    "../../protocol/",
                    $dialect,
                    "/schedules/migration.sql"
                )),
            },
            installed: load!($dialect, "installed"),
            upsert: load!($dialect, "upsert"),
            list: load!($dialect, "list"),
            get: load!($dialect, "get"),
            pause: load!($dialect, "pause"),
            resume: load!($dialect, "resume"),
            delete: load!($dialect, "delete"),
            due: load!($dialect, "due"),
            next_due: load!($dialect, "next_due"),
            advance: load!($dialect, "advance"),
        }
    };
    ($dialect:literal, $file:literal) => {
        include_str!(concat!(
            "../../protocol/",
            $dialect,
            "/schedules/",
            $file,
            ".sql"
        ))
    };
}

pub const SQLITE: ScheduleStatements = load!("sqlite");
pub const POSTGRES: ScheduleStatements = load!("postgres");
