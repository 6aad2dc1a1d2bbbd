//! The schedules table's SQL, per dialect (docs/protocol.md, "Schedules"):
//! not a protocol migration but a table of this SDK's own, created on first
//! use under a ledger name the protocol's runners ignore.

use super::Migration;

/// The ledger name of the schedules table: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know), and no
/// future protocol migration can take it.
pub const LEDGER_NAME: &str = "node_schedules_0001.sql";

/// The ledger name of the table's controls (overlap, intervals, the window,
/// the limit, the counts): applied with the table, and to a table an earlier
/// version created on its next use.
pub const CONTROLS_LEDGER_NAME: &str = "node_schedules_0002.sql";

/// `controls.sql` per dialect, under `CONTROLS_LEDGER_NAME`.
pub const SQLITE_CONTROLS: Migration = Migration {
    name: CONTROLS_LEDGER_NAME,
    sql: feature_sql!("sqlite", "schedules", "controls"),
};
pub const POSTGRES_CONTROLS: Migration = Migration {
    name: CONTROLS_LEDGER_NAME,
    sql: feature_sql!("postgres", "schedules", "controls"),
};

feature_statements! {
    /// The statements on `cairnq_schedules`, one `.sql` file each; every one that
    /// answers rows answers whole rows (`select *` / `returning *`).
    ScheduleStatements in "schedules", ledger LEDGER_NAME;
    installed,
    controls_installed,
    upsert,
    list,
    get,
    pause,
    resume,
    delete,
    due,
    next_due,
    advance,
    skip,
}
