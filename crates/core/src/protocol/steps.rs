//! The steps table's SQL, per dialect (docs/protocol.md, "Durable steps"):
//! not a protocol migration but a table of this SDK's own, created on first
//! use under a ledger name the protocol's runners ignore.

/// The ledger name of the steps table: no protocol number, so no other SDK's
/// runner knows it (runners ignore names they do not know), and no future
/// protocol migration can take it.
pub const LEDGER_NAME: &str = "node_steps_0001.sql";

feature_statements! {
    /// The statements on `cairnq_steps`, one `.sql` file each.
    StepStatements in "steps", ledger LEDGER_NAME;
    installed,
    load,
    summaries,
    record,
    suspend,
    child_state,
    wake_parents,
    live_children,
    restart_target,
    drop_from,
    restart,
}
