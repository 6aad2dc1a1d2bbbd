//! The flow-control tables' SQL, per dialect (docs/protocol.md, "Flow control
//! tables"): not a protocol migration but tables of this SDK's own, created on
//! first use under a ledger name the protocol's runners ignore.

use super::Migration;

/// The ledger name of the flow-control tables: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know), and no
/// future protocol migration can take it.
pub const LEDGER_NAME: &str = "node_flow_0001.sql";

/// The statements of a flow draw and of declarations both dialects have, one
/// `.sql` file each; each dialect's own ones follow.
#[derive(Debug)]
pub struct FlowStatements {
    pub migration: Migration,
    pub limits: &'static str,
    pub declare: &'static str,
    pub starts_window: &'static str,
    pub running_groups: &'static str,
    pub candidates: &'static str,
    pub claim_picked: &'static str,
}

macro_rules! load {
    ($dialect:literal) => {
        FlowStatements {
            migration: Migration {
                name: LEDGER_NAME,
                sql: load!($dialect, "migration"),
            },
            limits: load!($dialect, "limits"),
            declare: load!($dialect, "declare"),
            starts_window: load!($dialect, "starts_window"),
            running_groups: load!($dialect, "running_groups"),
            candidates: load!($dialect, "candidates"),
            claim_picked: load!($dialect, "claim_picked"),
        }
    };
    ($dialect:literal, $file:literal) => {
        include_str!(concat!(
            "../../protocol/",
            $dialect,
            "/flow/",
            $file,
            ".sql"
        ))
    };
}

pub const SQLITE: FlowStatements = load!("sqlite");
pub const POSTGRES: FlowStatements = load!("postgres");

/// SQLite only: drop the starts no window reaches any more.
pub const SQLITE_STARTS_PRUNE: &str = load!("sqlite", "starts_prune");
/// SQLite only: one start per claimed task (Postgres records them in
/// `claim_picked`).
pub const SQLITE_STARTS_RECORD: &str = load!("sqlite", "starts_record");
/// Postgres only: the advisory locks of a draw's keys, never waiting.
pub const POSTGRES_LOCK_KEYS: &str = load!("postgres", "lock_keys");
