//! The events tables' SQL, per dialect (docs/protocol.md, "Events"): not a
//! protocol migration but tables and triggers of this SDK's own, created by
//! the first subscription on a database, under a ledger name the protocol's
//! runners ignore.

/// The ledger name of the events tables: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know).
pub const LEDGER_NAME: &str = "node_events_0001.sql";

/// The ledger name of the triggers' second form (`triggers.sql`): applied
/// with the tables, and to tables an earlier version created on their next
/// subscription.
pub const TRIGGERS_LEDGER_NAME: &str = "node_events_0002.sql";

/// `triggers.sql` per dialect, under `TRIGGERS_LEDGER_NAME`: on SQLite one
/// insert per row without a derived table, on Postgres one trigger call per
/// statement.
pub const SQLITE_TRIGGERS: super::Migration = super::Migration {
    name: TRIGGERS_LEDGER_NAME,
    sql: feature_sql!("sqlite", "events", "triggers"),
};
pub const POSTGRES_TRIGGERS: super::Migration = super::Migration {
    name: TRIGGERS_LEDGER_NAME,
    sql: feature_sql!("postgres", "events", "triggers"),
};

/// The ledger name of the Postgres transitions trigger's join plan
/// (`join_plan.sql`): applied after `TRIGGERS_LEDGER_NAME`, with the tables
/// and to tables an earlier version created. SQLite's row triggers join
/// nothing, so it has no such entry.
pub const JOIN_PLAN_LEDGER_NAME: &str = "node_events_0003.sql";

pub const POSTGRES_JOIN_PLAN: super::Migration = super::Migration {
    name: JOIN_PLAN_LEDGER_NAME,
    sql: feature_sql!("postgres", "events", "join_plan"),
};

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
