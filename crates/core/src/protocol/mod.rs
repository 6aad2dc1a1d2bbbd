//! The storage protocol's SQL, per dialect: migrations in ledger order and one
//! statement per file (docs/protocol.md, "Migration ledger", "Statements"). The
//! files live under `crates/core/protocol/<dialect>/` and are compiled into the
//! binary.

/// One `.sql` file of a feature's own directory, `protocol/<dialect>/<dir>/`.
macro_rules! feature_sql {
    ($dialect:literal, $dir:literal, $file:literal) => {
        include_str!(concat!(
            "../../protocol/",
            $dialect,
            "/",
            $dir,
            "/",
            $file,
            ".sql"
        ))
    };
}

/// The SQL of a feature's tables of this SDK's own (not protocol migrations:
/// created on first use under a ledger name other SDKs' runners ignore): the
/// struct of its statements (the migration, then one `.sql` file per field,
/// named as the field) and that struct per dialect, `SQLITE` and `POSTGRES`.
macro_rules! feature_statements {
    (
        $(#[$struct_meta:meta])*
        $statements:ident in $dir:literal, ledger $ledger:expr;
        $($(#[$field_meta:meta])* $field:ident),+ $(,)?
    ) => {
        $(#[$struct_meta])*
        #[derive(Debug)]
        pub struct $statements {
            pub migration: super::Migration,
            $($(#[$field_meta])* pub $field: &'static str,)+
        }

        pub const SQLITE: $statements =
            feature_statements!(@load $statements, "sqlite", $dir, $ledger; $($field),+);
        pub const POSTGRES: $statements =
            feature_statements!(@load $statements, "postgres", $dir, $ledger; $($field),+);
    };
    // A feature with statements only (on the protocol's own tables): no
    // table, so no migration.
    (
        $(#[$struct_meta:meta])*
        $statements:ident in $dir:literal, no table;
        $($(#[$field_meta:meta])* $field:ident),+ $(,)?
    ) => {
        $(#[$struct_meta])*
        #[derive(Debug)]
        pub struct $statements {
            $($(#[$field_meta])* pub $field: &'static str,)+
        }

        pub const SQLITE: $statements = $statements {
            $($field: include_str!(concat!(
                "../../protocol/sqlite/", $dir, "/", stringify!($field), ".sql"
            )),)+
        };
        pub const POSTGRES: $statements = $statements {
            $($field: include_str!(concat!(
                "../../protocol/postgres/", $dir, "/", stringify!($field), ".sql"
            )),)+
        };
    };
    (@load $statements:ident, $dialect:literal, $dir:literal, $ledger:expr; $($field:ident),+) => {
        $statements {
            migration: super::Migration {
                name: $ledger,
                sql: feature_sql!($dialect, $dir, "migration"),
            },
            $($field: include_str!(concat!(
                "../../protocol/", $dialect, "/", $dir, "/", stringify!($field), ".sql"
            )),)+
        }
    };
}

pub mod bulk;
pub mod deadletters;
pub mod events;
pub mod flow;
pub mod followups;
pub mod pauses;
pub mod retention;
pub mod schedules;
pub mod signals;
pub mod steps;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::task::COLUMNS;

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
    "0007_purge_status_index.sql",
    "0008_claim_due_index.sql",
    "0009_purge_queue_index.sql",
    "0010_drop_status_index.sql",
);

/// Postgres has 0003 (the notify trigger) and the same numbering otherwise.
pub const POSTGRES_MIGRATIONS: &[Migration] = migrations!("postgres":
    "0001_init.sql",
    "0002_purge_index.sql",
    "0003_notify.sql",
    "0004_lease_index.sql",
    "0005_clear_terminal_lease.sql",
    "0006_claim_name_index.sql",
    "0007_purge_status_index.sql",
    "0008_claim_due_index.sql",
    "0009_purge_queue_index.sql",
    "0010_drop_status_index.sql",
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
    debounce,
    get,
    get_by_key,
    get_status,
    get_status_by_key,
    list,
    stats,
    oldest_due,
    queue_depth,
    protocol_version,
    cancel,
    retry,
    purge,
    purge_count,
    recover_leases,
    claimable_probe,
    claim,
    claim_one_queue,
    claim_one_name,
    claim_one_queue_one_name,
    heartbeat,
    heartbeat_batch,
    cancel_requested,
    progress,
    succeed,
    complete,
    complete_batch,
    fail,
);

pub const SQLITE: Statements = load_statements!("sqlite");
pub const POSTGRES: Statements = load_statements!("postgres");

/// Postgres only, at connect: the schemas holding cairnq's tables (docs/protocol.md,
/// "Connection setup (Postgres)").
pub const POSTGRES_INSTALLATIONS: &str =
    include_str!("../../protocol/postgres/statements/installations.sql");

/// Postgres only, `submitMany`'s run of plain inserts as one statement (on
/// SQLite a prepared insert per row is cheaper).
pub const POSTGRES_INSERT_TASKS: &str =
    include_str!("../../protocol/postgres/statements/insert_tasks.sql");

/// SQLite only: mark claimed the rows a claim's draw read (the claim
/// statements read them; on Postgres each claim statement marks its own).
pub const SQLITE_CLAIM_IDS: &str = include_str!("../../protocol/sqlite/statements/claim_ids.sql");

/// Postgres only, in `purge`'s transaction before it: no sorting plans.
pub const POSTGRES_PURGE_IN_ORDER: &str =
    include_str!("../../protocol/postgres/statements/purge_in_order.sql");

/// Texts derived from a statement (`specialize`, `returning_row`,
/// `without_returning`, `selecting`), each built
/// once and kept for the process: there are only a few per statement.
/// `derivation` names the rewrite, `args` its arguments.
fn derived(
    statement: &'static str,
    derivation: &'static str,
    args: Vec<String>,
    build: impl FnOnce() -> String,
) -> &'static str {
    /// (statement address, rewrite, its arguments) → the derived text.
    type Texts = HashMap<(usize, &'static str, Vec<String>), &'static str>;
    static TEXTS: OnceLock<Mutex<Texts>> = OnceLock::new();
    let key = (statement.as_ptr() as usize, derivation, args);
    let mut texts = TEXTS.get_or_init(Default::default).lock().expect("texts");
    texts
        .entry(key)
        .or_insert_with(|| Box::leak(build().into_boxed_str()))
}

/// A write `statement` that answers with the rows it changed or inserted
/// (`returning *`).
pub fn returning_row(statement: &'static str) -> &'static str {
    derived(statement, "returning", Vec::new(), || {
        format!("{statement}\nreturning *")
    })
}

/// `statement` without its closing `returning …` clause: the same write,
/// answering with nothing but the count of rows it changed.
pub fn without_returning(statement: &'static str) -> &'static str {
    derived(statement, "without_returning", Vec::new(), || {
        let clause = statement
            .rfind("\nreturning ")
            .expect("the statement ends with a returning clause");
        statement[..clause].to_string()
    })
}

/// `statement`, a `select * from cairnq_tasks …`, reading `columns` instead
/// of whole rows: the same rows, in the same order.
pub fn selecting(statement: &'static str, columns: &'static str) -> &'static str {
    derived(statement, "selecting", vec![columns.to_string()], || {
        let star = "select * from cairnq_tasks";
        assert!(
            statement.contains(star),
            "the statement reads whole task rows"
        );
        statement.replacen(star, &format!("select {columns}\nfrom cairnq_tasks"), 1)
    })
}

/// `statement` with its row limit, `limit <param>::bigint` where `param` is
/// its last parameter, baked in as the literal `rows`. A prepared statement
/// keeps one plan for every execution only when no estimate hangs on a bound
/// value; the planner guesses a bound limit at a tenth of the table, so each
/// call would be planned afresh (bench/RESULTS.md, 2026-12-05). Callers keep
/// `rows` to a few values, so there are few texts.
pub fn with_literal_limit(statement: &'static str, param: &str, rows: i64) -> &'static str {
    let args = vec![param.to_string(), rows.to_string()];
    derived(statement, "literal_limit", args, || {
        let bound = format!("limit {param}::bigint");
        assert!(
            statement.contains(&bound),
            "the statement limits by {param}"
        );
        statement.replace(&bound, &format!("limit {rows}"))
    })
}

/// `statement`, which reads whole task rows as `select <star>` (`*` or
/// `task.*`), reading the `BODY_COLUMNS` as the literals `empty` (payload and
/// metadata are never null) and `null` instead: a listing that does not show
/// the bodies does not read them (Postgres leaves them in TOAST, SQLite
/// copies none of them). The row keeps its columns and their order.
pub fn without_bodies(
    statement: &'static str,
    star: &'static str,
    empty: &'static str,
    null: &'static str,
) -> &'static str {
    derived(statement, "without_bodies", vec![star.to_string()], || {
        let prefix = star.trim_end_matches('*');
        let columns: Vec<String> = COLUMNS
            .iter()
            .map(|column| match *column {
                "payload" | "metadata" => format!("{empty} as {column}"),
                "result" | "error" => format!("{null} as {column}"),
                other => format!("{prefix}{other}"),
            })
            .collect();
        let select = format!("select {star}");
        assert!(statement.contains(&select), "the statement reads {star}");
        statement.replacen(&select, &format!("select {}", columns.join(", ")), 1)
    })
}

/// docs/protocol.md, "Optional filters": `statement` with every term
/// `(P is null or <condition>)` whose parameter `P` is listed in `set`
/// rewritten to `<condition>`, so the planner (which plans before any value is
/// bound) can use the condition's index. Unset terms stay, so the parameters
/// bound never change. There are at most 2^filters texts per statement.
pub fn specialize(statement: &'static str, set: &[&str]) -> &'static str {
    if set.is_empty() {
        return statement;
    }
    let args = set.iter().map(|p| p.to_string()).collect();
    derived(statement, "specialize", args, || {
        set.iter().fold(statement.to_string(), |text, param| {
            with_term_required(&text, param)
        })
    })
}

/// `specialize` for a call's optional filters, given as `(parameter, set)`
/// pairs: the terms of the filters that are set become required.
pub fn specialize_for(statement: &'static str, filters: &[(&str, bool)]) -> &'static str {
    let set: Vec<&str> = filters
        .iter()
        .filter(|(_, set)| *set)
        .map(|(param, _)| *param)
        .collect();
    specialize(statement, &set)
}

/// `text` with each `(param is null or <condition>)` term made `<condition>`.
fn with_term_required(text: &str, param: &str) -> String {
    let open = format!("({param} is null or ");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut found = false;
    while let Some(start) = rest.find(&open) {
        found = true;
        let condition = &rest[start + open.len()..];
        // The term ends at the parenthesis that closes the one it opened with.
        let mut depth = 1;
        let end = condition
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map(|(at, _)| at)
            .unwrap_or_else(|| panic!("an optional term on {param} is closed"));
        out.push_str(&rest[..start]);
        out.push_str(&condition[..end]);
        rest = &condition[end + 1..];
    }
    assert!(found, "the statement has no optional term on {param}");
    out.push_str(rest);
    out
}

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
    use crate::task::BODY_COLUMNS;

    #[test]
    fn ledger_names_follow_the_protocol() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/migration-ledger.json"))
                .expect("migration-ledger.json is JSON");
        for (dialect, migrations) in [
            ("sqlite", SQLITE_MIGRATIONS),
            ("postgres", POSTGRES_MIGRATIONS),
        ] {
            let names: Vec<_> = migrations.iter().map(|m| m.name).collect();
            assert_eq!(serde_json::json!(names), fixture[dialect], "{dialect}");
        }
        let own = [
            schedules::LEDGER_NAME,
            schedules::CONTROLS_LEDGER_NAME,
            flow::LEDGER_NAME,
            flow::SHARED_KEYS_LEDGER_NAME,
            followups::LEDGER_NAME,
        ];
        assert_eq!(serde_json::json!(own), fixture["nodeOwn"]);
        for name in own {
            assert!(
                !name.starts_with(char::is_numeric),
                "{name} takes no protocol number"
            );
        }
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
    fn set_filters_become_equalities() {
        let list = specialize(SQLITE.list, &[":queue", ":name"]);
        assert!(list.contains("and queue = :queue\n"));
        assert!(list.contains("and name = :name\n"));
        assert!(list.contains("(:status is null or status = :status)"));
        assert!(std::ptr::eq(
            list,
            specialize(SQLITE.list, &[":queue", ":name"])
        ));
        assert!(std::ptr::eq(SQLITE.list, specialize(SQLITE.list, &[])));
        let purge = specialize(POSTGRES.purge, &["$3::text"]);
        assert!(purge.contains("and status = $3::text\n"));
        assert!(purge.contains("($2::text is null or queue = $2::text)"));
        // A condition with parentheses of its own is kept whole.
        let probe = specialize(SQLITE.claimable_probe, &[":names"]);
        assert!(probe.contains("and name in (select value from json_each(:names))\n"));
        // Every filter of every filtered statement can be specialized.
        for (sql, params) in [
            (
                SQLITE.list,
                &[":status", ":queue", ":name", ":root_id", ":correlation_id"][..],
            ),
            (SQLITE.purge, &[":queue", ":status", ":name"]),
            (SQLITE.stats, &[":queue"]),
            (
                POSTGRES.list,
                &["$1::text", "$2::text", "$3::text", "$4::text", "$5::text"],
            ),
            (POSTGRES.purge, &["$2::text", "$3::text", "$4::text"]),
            (SQLITE.purge_count, &[":queue", ":status", ":name"]),
            (POSTGRES.purge_count, &["$2::text", "$3::text", "$4::text"]),
            (POSTGRES.stats, &["$1::text"]),
            (SQLITE.claimable_probe, &[":names"]),
            (POSTGRES.claimable_probe, &["$2::text[]"]),
        ] {
            assert!(!specialize(sql, params).contains("is null or"));
        }
    }

    /// The `where` clause of `sql`'s first `from cairnq_tasks` subquery.
    fn candidate_predicate(sql: &str) -> &str {
        let start = sql.find("    where status in").expect("a purge predicate");
        let end = start + sql[start..].find("    limit").expect("a limit after it");
        let predicate = &sql[start..end];
        predicate
            .strip_suffix("    order by completed_at_ms\n")
            .unwrap_or(predicate)
    }

    #[test]
    fn purge_preview_counts_what_purge_deletes() {
        for statements in [&SQLITE, &POSTGRES] {
            assert_eq!(
                candidate_predicate(statements.purge_count),
                candidate_predicate(statements.purge)
            );
            assert!(candidate_predicate(statements.purge).contains("completed_at_ms <"));
        }
        for statements in [&retention::SQLITE, &retention::POSTGRES] {
            assert_eq!(
                candidate_predicate(statements.keep_last_count),
                candidate_predicate(statements.keep_last)
            );
            assert!(candidate_predicate(statements.keep_last).ends_with("completed_at_ms desc\n"));
        }
    }

    #[test]
    fn listings_can_leave_the_bodies_unread() {
        let sqlite = without_bodies(SQLITE.list, "task.*", "'{}'", "null");
        assert!(sqlite.contains("select task.id, task.name, task.queue, task.status, '{}' as payload, null as result, null as error, '{}' as metadata, task.progress,"));
        let postgres = without_bodies(POSTGRES.list, "*", "'{}'::jsonb", "null::jsonb");
        assert!(postgres.contains("'{}'::jsonb as payload, null::jsonb as result,"));
        for body in BODY_COLUMNS {
            assert!(!sqlite.contains(&format!("task.{body}")));
        }
    }

    #[test]
    fn a_write_can_leave_its_rows_unreturned() {
        let quiet = without_returning(SQLITE.complete_batch);
        assert!(SQLITE.complete_batch.starts_with(quiet));
        assert!(!quiet.contains("returning"));
        assert!(quiet.trim_end().ends_with("+lease_until_ms > :now"));
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
