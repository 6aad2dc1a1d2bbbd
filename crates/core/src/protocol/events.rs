//! The events tables' SQL, per dialect (docs/protocol.md, "Events"): not a
//! protocol migration but tables and triggers of this SDK's own, created by
//! the first subscription on a database, under a ledger name the protocol's
//! runners ignore.

/// The ledger name of the events tables: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know).
pub const LEDGER_NAME: &str = "node_events_0001.sql";

feature_statements! {
    /// The statements on `cairnq_events` and `cairnq_events_horizon`, one
    /// `.sql` file each.
    EventStatements in "events", ledger LEDGER_NAME;
    installed,
    page,
    head,
    horizon,
    age_cut,
    count_cut,
    last_before,
    delete_before,
    set_horizon,
}

/// Postgres only: the transaction id below which every event is final (on
/// SQLite, one writer at a time, every committed event is).
pub const POSTGRES_BOUND: &str = feature_sql!("postgres", "events", "bound");
