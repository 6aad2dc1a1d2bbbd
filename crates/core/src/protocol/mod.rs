//! The storage protocol's SQL, per dialect: migrations in ledger order and one
//! statement per file (docs/protocol.md, "Migration ledger", "Statements"). The
//! files live under `crates/core/protocol/<dialect>/` and are compiled into the
//! binary.

/// Protocol major this SDK speaks (`cairnq_meta.protocol_version`).
pub const PROTOCOL_VERSION: i64 = 1;

/// The stored `protocol_version` text as a number; 0 when missing or unreadable.
pub fn stored_version(stored: Option<&str>) -> i64 {
    stored.and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// docs/protocol.md, "Protocol version": refuse a database stamped with another
/// major. Before migrating, a database without the row yet (`missing_is_error`
/// false) passes.
pub fn check_version(stored: Option<String>, missing_is_error: bool) -> crate::Result<()> {
    match stored {
        None if !missing_is_error => Ok(()),
        Some(v) if stored_version(Some(&v)) == PROTOCOL_VERSION => Ok(()),
        other => Err(crate::Error::ProtocolVersionMismatch {
            found: other.unwrap_or_else(|| "0".into()),
        }),
    }
}

/// One migration file; `name` is what the ledger records, `.sql` included.
#[derive(Debug)]
pub struct Migration {
    pub name: &'static str,
    pub sql: &'static str,
}

macro_rules! migrations {
    ($dialect:literal: $($file:literal),+ $(,)?) => {
        &[$(Migration {
            name: $file,
            sql: include_str!(concat!("../../protocol/", $dialect, "/migrations/", $file)),
        }),+]
    };
}

pub const SQLITE_MIGRATIONS: &[Migration] = migrations!("sqlite":
    "0001_init.sql",
    "0002_purge_index.sql",
    "0004_lease_index.sql",
    "0005_clear_terminal_lease.sql",
    "0006_claim_name_index.sql",
);

/// Postgres has 0003 (the notify trigger) and the same numbering otherwise.
pub const POSTGRES_MIGRATIONS: &[Migration] = migrations!("postgres":
    "0001_init.sql",
    "0002_purge_index.sql",
    "0003_notify.sql",
    "0004_lease_index.sql",
    "0005_clear_terminal_lease.sql",
    "0006_claim_name_index.sql",
);

macro_rules! statements {
    ($($field:ident),+ $(,)?) => {
        /// The statements both dialects have, one `.sql` file each.
        #[derive(Debug)]
        pub struct Statements {
            $(pub $field: &'static str,)+
        }

        macro_rules! load_statements {
            ($dialect:literal) => {
                Statements {
                    $($field: include_str!(concat!(
                        "../../protocol/", $dialect, "/statements/", stringify!($field), ".sql"
                    )),)+
                }
            };
        }
    };
}

statements!(
    insert_task,
    lock_key,
    get_key,
    upsert_key,
    get,
    get_by_key,
    list,
    stats,
    queue_depth,
    protocol_version,
    cancel,
    retry,
    purge,
    recover_leases,
    claim,
    claim_one_queue,
    claim_one_name,
    claim_one_queue_one_name,
    heartbeat,
    heartbeat_batch,
    progress,
    succeed,
    complete,
    complete_batch,
    fail,
);

pub const SQLITE: Statements = load_statements!("sqlite");
pub const POSTGRES: Statements = load_statements!("postgres");

/// SQLite's read-only pre-check before a claim opens a write transaction.
pub const SQLITE_CLAIMABLE_PROBE: &str =
    include_str!("../../protocol/sqlite/statements/claimable_probe.sql");

/// Which of the four claim statements a draw uses (docs/protocol.md, "Claim"):
/// equality forms let the planner walk an index in claim order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimShape {
    Lists,
    OneQueue,
    OneName,
    OneQueueOneName,
}

impl ClaimShape {
    pub fn of(queues: &[String], names: Option<&[String]>) -> ClaimShape {
        let one_queue = queues.len() == 1;
        let one_name = names.is_some_and(|n| n.len() == 1);
        match (one_queue, one_name) {
            (false, false) => ClaimShape::Lists,
            (true, false) => ClaimShape::OneQueue,
            (false, true) => ClaimShape::OneName,
            (true, true) => ClaimShape::OneQueueOneName,
        }
    }

    pub fn statement(self, statements: &Statements) -> &'static str {
        match self {
            ClaimShape::Lists => statements.claim,
            ClaimShape::OneQueue => statements.claim_one_queue,
            ClaimShape::OneName => statements.claim_one_name,
            ClaimShape::OneQueueOneName => statements.claim_one_queue_one_name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ledger_names_follow_the_protocol() {
        let sqlite: Vec<_> = SQLITE_MIGRATIONS.iter().map(|m| m.name).collect();
        assert_eq!(
            sqlite,
            [
                "0001_init.sql",
                "0002_purge_index.sql",
                "0004_lease_index.sql",
                "0005_clear_terminal_lease.sql",
                "0006_claim_name_index.sql"
            ]
        );
        let postgres: Vec<_> = POSTGRES_MIGRATIONS.iter().map(|m| m.name).collect();
        assert_eq!(
            postgres,
            [
                "0001_init.sql",
                "0002_purge_index.sql",
                "0003_notify.sql",
                "0004_lease_index.sql",
                "0005_clear_terminal_lease.sql",
                "0006_claim_name_index.sql"
            ]
        );
    }

    #[test]
    fn protocol_versions() {
        assert!(check_version(None, false).is_ok());
        assert!(check_version(Some(" 1".into()), true).is_ok());
        assert!(matches!(
            check_version(None, true),
            Err(crate::Error::ProtocolVersionMismatch { found }) if found == "0"
        ));
        assert!(check_version(Some("2".into()), false).is_err());
        assert_eq!(stored_version(Some("x")), 0);
    }

    #[test]
    fn claim_shapes() {
        let one = vec!["a".to_string()];
        let two = vec!["a".to_string(), "b".to_string()];
        assert_eq!(ClaimShape::of(&two, None), ClaimShape::Lists);
        assert_eq!(ClaimShape::of(&one, Some(&two)), ClaimShape::OneQueue);
        assert_eq!(ClaimShape::of(&two, Some(&one)), ClaimShape::OneName);
        assert_eq!(
            ClaimShape::of(&one, Some(&one)),
            ClaimShape::OneQueueOneName
        );
    }
}
