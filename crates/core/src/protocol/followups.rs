//! The debounce follow-ups table's SQL, per dialect (docs/protocol.md,
//! "Debounced submit"): not a protocol migration but a table of this SDK's
//! own, created by the first follow-up under a ledger name the protocol's
//! runners ignore.

/// The ledger name of the follow-ups table: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know).
pub const LEDGER_NAME: &str = "node_followups_0001.sql";

feature_statements! {
    /// The statements on `cairnq_followups`, one `.sql` file each.
    FollowupStatements in "followups", ledger LEDGER_NAME;
    installed,
    held,
    hold,
    postpone,
    release,
    /// Whether a task recorded a step: on `cairnq_steps`, run only when that
    /// table exists.
    has_steps,
}

/// SQLite only: whether any follow-up is held back, read on a reader before
/// `release` (which takes the write lock).
pub const SQLITE_PENDING: &str = feature_sql!("sqlite", "followups", "pending");

/// SQLite only: `release`'s second statement (Postgres deletes the rows in
/// `release` itself), the rows of the follow-ups it released.
pub const SQLITE_FORGET: &str = feature_sql!("sqlite", "followups", "forget");
