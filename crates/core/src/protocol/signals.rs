//! The signals tables' SQL, per dialect (docs/protocol.md, "Signals"): not a
//! protocol migration but tables of this SDK's own, created by the first
//! signal sent or waited for, under a ledger name the protocol's runners
//! ignore.

/// The ledger name of the signals tables: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know).
pub const LEDGER_NAME: &str = "node_signals_0001.sql";

feature_statements! {
    /// The statements on `cairnq_signals` and `cairnq_signal_waits`, one
    /// `.sql` file each.
    SignalStatements in "signals", ledger LEDGER_NAME;
    installed,
    task_status,
    send,
    wake,
    wait_state,
    take,
    unconsumed,
    settle_wait,
    waits,
    pending,
}
