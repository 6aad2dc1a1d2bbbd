//! The queue pauses table's SQL, per dialect (docs/protocol.md, "Queue
//! pauses"): not a protocol migration but a table of this SDK's own, created
//! by the first `pauseQueue`, under a ledger name the protocol's runners
//! ignore.

/// The ledger name of the pauses table: no protocol number, so no other SDK's
/// runner knows it (runners ignore names they do not know).
pub const LEDGER_NAME: &str = "node_pauses_0001.sql";

feature_statements! {
    /// The statements on `cairnq_queue_pauses`, one `.sql` file each.
    PauseStatements in "pauses", ledger LEDGER_NAME;
    installed,
    pause,
    resume,
    paused,
}
