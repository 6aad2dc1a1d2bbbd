//! The flow-control tables' SQL, per dialect (docs/protocol.md, "Flow control
//! tables"): not a protocol migration but tables of this SDK's own, created on
//! first use under a ledger name the protocol's runners ignore.

/// The ledger name of the flow-control tables: no protocol number, so no other
/// SDK's runner knows it (runners ignore names they do not know), and no
/// future protocol migration can take it.
pub const LEDGER_NAME: &str = "node_flow_0001.sql";

/// The ledger name of the shared keys' additions (`shared_keys_migration`),
/// applied with the tables.
pub const SHARED_KEYS_LEDGER_NAME: &str = "node_flow_0002.sql";

/// The shared keys' additions to the flow-control tables, per dialect.
pub const SQLITE_SHARED_KEYS: super::Migration = super::Migration {
    name: SHARED_KEYS_LEDGER_NAME,
    sql: feature_sql!("sqlite", "flow", "shared_keys_migration"),
};
pub const POSTGRES_SHARED_KEYS: super::Migration = super::Migration {
    name: SHARED_KEYS_LEDGER_NAME,
    sql: feature_sql!("postgres", "flow", "shared_keys_migration"),
};

feature_statements! {
    /// The statements of a flow draw and of declarations both dialects have, one
    /// `.sql` file each; each dialect's own ones follow.
    FlowStatements in "flow", ledger LEDGER_NAME;
    limits,
    declare,
    key_limits,
    declare_key,
    starts_window,
    due_count,
    push_back,
}

/// SQLite only: drop the starts no window reaches any more.
pub const SQLITE_STARTS_PRUNE: &str = feature_sql!("sqlite", "flow", "starts_prune");
/// SQLite only: one start per claimed task (Postgres records them in its
/// `claim_ids`).
pub const SQLITE_STARTS_RECORD: &str = feature_sql!("sqlite", "flow", "starts_record");
/// SQLite only: a chunk's due rows in claim order, id and group (`''` for
/// none), for the core to pick among (flow/pick.rs): the claim draw of
/// one name from one queue, reading those two columns. Bind `:limit` rows.
pub fn sqlite_draw_scan() -> &'static str {
    super::selecting(
        super::SQLITE.claim_one_queue_one_name,
        "id, coalesce(cast(json_extract(metadata, '$.\"cairnq.group\"') as text), '')",
    )
}
/// SQLite only: the running rows of a chunk's groups.
pub const SQLITE_GROUP_RUNNING: &str = feature_sql!("sqlite", "flow", "group_running");
/// SQLite only: the starts in the window of a chunk's groups.
pub const SQLITE_GROUP_STARTS: &str = feature_sql!("sqlite", "flow", "group_starts");
/// Postgres only: a chunk's due rows without group limits, id and group, in
/// claim order.
pub const POSTGRES_DRAW_SCAN: &str = feature_sql!("postgres", "flow", "draw_scan");
/// Postgres only: under a group concurrency, the running rows of the name
/// per group, sent with `limits_and_locks`.
pub const POSTGRES_GROUP_RUNNING: &str = feature_sql!("postgres", "flow", "group_running");
/// Postgres only: the starts in the window of a chunk's groups.
pub const POSTGRES_GROUP_STARTS: &str = feature_sql!("postgres", "flow", "group_starts");
/// Postgres only: claim the ids a chunk picked, recording their starts.
pub const POSTGRES_CLAIM_IDS: &str = feature_sql!("postgres", "flow", "claim_ids");
/// Postgres only: the advisory lock of a name-wide rate, never waiting.
pub const POSTGRES_LOCK_NAME: &str = feature_sql!("postgres", "flow", "lock_name");
/// Postgres only: the lock of the budget a push-back fills, waited for.
pub const POSTGRES_PUSH_BACK_LOCK: &str = feature_sql!("postgres", "flow", "push_back_lock");
/// Postgres only: before each chunk, the name's limits and clock and, under
/// group limits, the chunk's rows and the advisory locks of their groups,
/// never waiting.
pub const POSTGRES_LIMITS_AND_LOCKS: &str = feature_sql!("postgres", "flow", "limits_and_locks");
