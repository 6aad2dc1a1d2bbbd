//! The schedules table's SQL, per dialect (docs/protocol.md, "Schedules"):
//! not a protocol migration but a table of this SDK's own, created on first
//! use under a ledger name the protocol's runners ignore.

/// The ledger name of the schedules table: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know), and no
/// future protocol migration can take it.
pub const LEDGER_NAME: &str = "node_schedules_0001.sql";

feature_statements! {
    /// The statements on `cairnq_schedules`, one `.sql` file each; every one that
    /// answers rows answers whole rows (`select *` / `returning *`).
    ScheduleStatements in "schedules", ledger LEDGER_NAME;
    installed,
    upsert,
    list,
    get,
    pause,
    resume,
    delete,
    due,
    next_due,
    advance,
}
