//! Postgres connections the protocol's way (docs/protocol.md, "Migration
//! ledger", "Connection setup (Postgres)"): error mapping, the connect
//! checks, migrations, and reading rows.

use tokio_postgres::error::SqlState;

use super::transport::{end_tx, params, Param, PgRow, Session, Transaction, Transport};

use crate::error::{Error, Result};
use crate::protocol::{self, POSTGRES, POSTGRES_INSTALLATIONS, POSTGRES_MIGRATIONS};
use crate::task::{Status, Task, COLUMNS};

/// The server's own words when it refused us, else the driver's.
pub(super) fn driver_cause(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => with_sources(e),
    }
}

/// The driver's message followed by its causes: tokio-postgres keeps the
/// cause ("Connection refused", "timed out") out of its own `Display`.
fn with_sources(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !cause_text.is_empty() && !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Map a statement's failure: server errors keep their SQLSTATE; a lost
/// connection is a connection error.
pub fn db_error(e: tokio_postgres::Error) -> Error {
    if let Some(db) = e.as_db_error() {
        return Error::Database {
            code: db.code().code().to_string(),
            message: db.message().to_string(),
        };
    }
    let io = std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>());
    if e.is_closed() || io {
        Error::Connection(format!(
            "lost the connection to Postgres: {}",
            with_sources(&e)
        ))
    } else {
        Error::Database {
            code: SqlState::INTERNAL_ERROR.code().to_string(),
            message: with_sources(&e),
        }
    }
}

/// Run one statement and hand back its rows (read by position: the
/// statement names its columns).
pub async fn rows<S: Session + ?Sized>(
    session: &S,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Vec<S::Row>> {
    session.query(sql, params).await
}

pub async fn execute<S: Session + ?Sized>(
    session: &S,
    sql: &str,
    params: &[Param<'_>],
) -> Result<()> {
    session.query(sql, params).await.map(|_| ())
}

pub async fn tasks<S: Session + ?Sized>(
    session: &S,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Vec<Task>> {
    task_rows(&session.query(sql, params).await?)
}

/// A statement's task rows as tasks.
pub fn task_rows<R: PgRow>(rows: &[R]) -> Result<Vec<Task>> {
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    let columns = TaskColumns::of(first)?;
    rows.iter().map(|row| columns.task(row)).collect()
}

pub async fn task<S: Session + ?Sized>(
    session: &S,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Option<Task>> {
    Ok(tasks(session, sql, params).await?.into_iter().next())
}

/// Where each of a task row's columns is in one statement's result: task
/// rows are read by name, so the table's column order does not matter (and
/// no catalog query checks it). Resolved once per result; a result in the
/// table's order (any table the protocol created) is recognized in one pass.
pub struct TaskColumns([usize; COLUMNS.len()]);

impl TaskColumns {
    pub fn of<R: PgRow>(row: &R) -> Result<TaskColumns> {
        let mut at: [usize; COLUMNS.len()] = std::array::from_fn(|i| i);
        let in_order = COLUMNS
            .iter()
            .enumerate()
            .all(|(i, name)| row.column_name(i) == Some(*name));
        if !in_order {
            for (slot, name) in at.iter_mut().zip(COLUMNS) {
                *slot = (0..)
                    .map_while(|i| row.column_name(i).map(|found| (i, found)))
                    .find(|(_, found)| *found == name)
                    .map(|(i, _)| i)
                    .ok_or_else(|| Error::Database {
                        code: SqlState::UNDEFINED_COLUMN.code().to_string(),
                        message: format!("a task row has no column {name}"),
                    })?;
            }
        }
        Ok(TaskColumns(at))
    }

    fn json<R: PgRow>(&self, row: &R, column: usize) -> Result<String> {
        row.opt_json(self.0[column])?
            .ok_or_else(|| Error::Database {
                code: SqlState::NOT_NULL_VIOLATION.code().to_string(),
                message: format!("column {} is null", COLUMNS[column]),
            })
    }

    /// The task in `row`, a row of the result these positions were resolved on.
    pub fn task<R: PgRow>(&self, row: &R) -> Result<Task> {
        let at = &self.0;
        let status = row.text(at[3])?;
        Ok(Task {
            id: row.text(at[0])?,
            name: row.text(at[1])?,
            queue: row.text(at[2])?,
            status: status.parse::<Status>().map_err(|_| Error::Database {
                code: SqlState::DATA_EXCEPTION.code().to_string(),
                message: format!("unknown task status {status}"),
            })?,
            payload: self.json(row, 4)?,
            result: row.opt_json(at[5])?,
            error: row.opt_json(at[6])?,
            metadata: self.json(row, 7)?,
            progress: row.opt_float(at[8])?,
            message: row.opt_text(at[9])?,
            attempt: row.int(at[10])?,
            max_attempts: row.int(at[11])?,
            priority: row.int(at[12])?,
            worker_id: row.opt_text(at[13])?,
            lease_until_ms: row.opt_int(at[14])?,
            run_at_ms: row.int(at[15])?,
            cancel_requested_at_ms: row.opt_int(at[16])?,
            parent_id: row.opt_text(at[17])?,
            root_id: row.opt_text(at[18])?,
            correlation_id: row.opt_text(at[19])?,
            created_at_ms: row.int(at[20])?,
            updated_at_ms: row.int(at[21])?,
            completed_at_ms: row.opt_int(at[22])?,
        })
    }
}

/// The first row's first column.
async fn scalar<S: Session + ?Sized>(session: &S, sql: &str) -> Result<Option<S::Row>> {
    Ok(session.query(sql, &[]).await?.into_iter().next())
}

/// The stored `protocol_version` text, `None` when the row is missing.
pub async fn read_protocol_version<S: Session + ?Sized>(session: &S) -> Result<Option<String>> {
    match scalar(session, POSTGRES.protocol_version).await? {
        Some(row) => row.opt_text(0),
        None => Ok(None),
    }
}

async fn flag<S: Session + ?Sized>(session: &S, sql: &str) -> Result<bool> {
    match scalar(session, sql).await? {
        Some(row) => row.bool(0),
        None => Ok(false),
    }
}

/// Before migrating (a DSN store only): refuse a database stamped with
/// another protocol major before changing anything; a missing stamp is a
/// new database.
pub async fn check_version_before_migrating<S: Session + ?Sized>(session: &S) -> Result<()> {
    let found = if flag(session, "select to_regclass('cairnq_meta') is not null").await? {
        read_protocol_version(session).await?
    } else {
        None
    };
    protocol::check_version(found, false)
}

/// The protocol's version check, once the tables exist: a missing row reads as 0.
pub async fn check_protocol_version<S: Session + ?Sized>(session: &S) -> Result<()> {
    protocol::check_version(read_protocol_version(session).await?, true)
}

/// `OpenMode::Existing`'s check, by reads only: the database must hold
/// cairnq's tables (on the connection's search path).
pub async fn check_existing<S: Session + ?Sized>(session: &S, target: &str) -> Result<()> {
    let found = flag(
        session,
        "select to_regclass('cairnq_meta') is not null \
         and to_regclass('cairnq_migrations') is not null \
         and to_regclass('cairnq_tasks') is not null",
    )
    .await?;
    if found {
        return Ok(());
    }
    // Name where the connection looked, and where cairnq is, if anywhere.
    let (current, installed) = installations(session).await?;
    let looked = match current {
        Some(schema) => format!("schema {} (its search_path) has", json_quoted(&schema)),
        None => "its search_path names no schema that exists, so it has".to_string(),
    };
    let elsewhere = match installed.as_slice() {
        [] => String::new(),
        schemas => format!(
            "; cairnq is installed in schema {} (set search_path in the DSN: options=-c search_path=...)",
            schemas.iter().map(|s| json_quoted(s)).collect::<Vec<_>>().join(", ")
        ),
    };
    Err(Error::not_cairnq(format!(
        "the Postgres database at {target} is not a cairnq database: {looked} no cairnq_meta, cairnq_migrations and cairnq_tasks tables{elsewhere} (nothing was changed)"
    )))
}

fn json_quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// The connection's current schema and the schemas holding cairnq's tasks
/// table (`installations.sql`).
async fn installations<S: Session + ?Sized>(session: &S) -> Result<(Option<String>, Vec<String>)> {
    let found = session.query(POSTGRES_INSTALLATIONS, &[]).await?;
    let current = match found.first() {
        Some(row) => row.opt_text(0)?,
        None => None,
    };
    let installed = found
        .iter()
        .filter_map(|row| row.opt_text(1).transpose())
        .collect::<Result<Vec<String>>>()?;
    Ok((current, installed))
}

/// The split check at connect, before anything is created (docs/protocol.md,
/// "Connection setup (Postgres)"): where the connection resolves against
/// where cairnq is installed.
pub async fn check_schema<S: Session + ?Sized>(session: &S, schema: Option<&str>) -> Result<()> {
    let (current, installed) = installations(session).await?;
    schema_verdict(schema, current.as_deref(), &installed)
}

/// `SchemaMismatch` when connecting would miss the configured schema, or
/// would start a second installation beside the existing ones.
pub fn schema_verdict(
    schema: Option<&str>,
    current: Option<&str>,
    installed: &[String],
) -> Result<()> {
    let quoted = |v: Option<&str>| serde_json::to_string(&v).expect("text encodes");
    match schema {
        Some(wanted) if current != Some(wanted) => Err(Error::SchemaMismatch(format!(
            "cairnq is configured for schema {} but this connection resolves to {} — check the connection's search_path",
            quoted(Some(wanted)),
            quoted(current)
        ))),
        Some(_) => Ok(()),
        None => match current {
            Some(here) if !installed.is_empty() && !installed.iter().any(|s| s == here) => {
                let elsewhere: Vec<String> = installed.iter().map(|s| quoted(Some(s))).collect();
                Err(Error::SchemaMismatch(format!(
                    "cairnq tables already exist in schema {} of this database, but this connection resolves to {}, where there are none. Connecting would create a second, parallel installation that the other one can never see — an API and a worker split this way agree about everything except where, and no task crosses. Point this process at the same schema (`schema` option, or `options=-c search_path=...` in the DSN), or pass `schema` explicitly to confirm a separate installation is what you meant.",
                    elsewhere.join(", "),
                    quoted(Some(here))
                )))
            }
            _ => Ok(()),
        },
    }
}

/// `schema` for a DSN store: a name that double quotes keep a name.
pub fn quoted_schema(schema: &str) -> Result<String> {
    let mut chars = schema.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain {
        Ok(format!("\"{schema}\""))
    } else {
        Err(Error::Invalid(format!(
            "schema must be a plain identifier (letters, digits, _ and $, not starting with a digit), got {}",
            serde_json::to_string(schema).expect("text encodes")
        )))
    }
}

/// Apply every migration the ledger lacks, each in its own transaction that
/// first locks the ledger, so concurrent cold starts apply it exactly once
/// (docs/protocol.md, "Migration ledger").
pub async fn migrate<T: Transport>(transport: &T, opened: &T::Opened) -> Result<()> {
    create_ledger(&transport.conn(opened).await?).await?;
    for migration in POSTGRES_MIGRATIONS {
        let tx = transport.begin(opened).await?;
        let applied = apply(&tx, migration).await;
        end_tx(tx, applied)
            .await
            .map_err(|err| failed_migration(migration, err))?;
    }
    Ok(())
}

/// A migration's failure names it (a `cairnq_tasks` that is not the
/// protocol's fails here, on an index over a column it lacks).
fn failed_migration(migration: &protocol::Migration, err: Error) -> Error {
    match err {
        Error::Database { code, message } => Error::Database {
            code,
            message: format!("migration {} failed: {message}", migration.name),
        },
        other => other,
    }
}

/// Whether a feature's tables exist: its `installed.sql` answers one bool
/// (a database may never have used the feature).
pub async fn feature_installed<S: Session>(session: &S, installed_sql: &str) -> Result<bool> {
    match session.query(installed_sql, &[]).await?.first() {
        Some(row) => row.bool(0),
        None => Ok(false),
    }
}

/// A feature's tables in a transaction of their own, under the ledger's
/// exclusive lock (`apply`), so two processes installing at once create
/// them and their ledger row once.
pub async fn install_feature<X: Transaction>(tx: X, migration: &protocol::Migration) -> Result<()> {
    let applied = apply(&tx, migration).await;
    end_tx(tx, applied).await
}

/// One migration under the ledger's lock, unless the ledger has it.
pub async fn apply<S: Session>(tx: &S, migration: &protocol::Migration) -> Result<()> {
    tx.batch("lock table cairnq_migrations in exclusive mode")
        .await?;
    let applied = !tx
        .query(
            "select 1 from cairnq_migrations where name = $1::text",
            &params![&migration.name],
        )
        .await?
        .is_empty();
    if !applied {
        tx.batch(migration.sql).await?;
        tx.query(
            "insert into cairnq_migrations (name, applied_at_ms) \
             values ($1::text, (extract(epoch from now()) * 1000)::bigint)",
            &params![&migration.name],
        )
        .await?;
    }
    Ok(())
}

/// Two processes creating the ledger at once: the loser's "if not exists"
/// still trips over the winner's catalog rows (a unique violation in
/// pg_type/pg_class, or "type … already exists"), which means it exists now.
async fn create_ledger<S: Session>(session: &S) -> Result<()> {
    let created = session
        .batch(
            "create table if not exists cairnq_migrations \
             (name text primary key, applied_at_ms bigint not null)",
        )
        .await;
    match created {
        Err(Error::Database { code, .. })
            if code == SqlState::UNIQUE_VIOLATION.code()
                || code == SqlState::DUPLICATE_TABLE.code()
                || code == SqlState::DUPLICATE_OBJECT.code() =>
        {
            Ok(())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Display;

    use super::*;

    #[test]
    fn the_schema_guard_follows_the_installations() {
        let there = vec!["billing".to_string()];
        assert!(
            schema_verdict(None, Some("public"), &[]).is_ok(),
            "a first installation"
        );
        assert!(
            schema_verdict(None, None, &there).is_ok(),
            "nothing resolves: nothing to split"
        );
        assert!(
            schema_verdict(None, Some("billing"), &there).is_ok(),
            "joining it"
        );
        let Err(Error::SchemaMismatch(split)) =
            schema_verdict(None, Some("public"), &["a".into(), "billing".into()])
        else {
            panic!("a second installation must be refused");
        };
        assert!(split.starts_with("cairnq tables already exist in schema \"a\", \"billing\" of this database, but this connection resolves to \"public\", where there are none."), "{split}");
        assert!(schema_verdict(Some("billing"), Some("billing"), &[]).is_ok());
        let Err(Error::SchemaMismatch(missed)) = schema_verdict(Some("billing"), None, &there)
        else {
            panic!("a configured schema must be where the connection resolves");
        };
        assert_eq!(missed, "cairnq is configured for schema \"billing\" but this connection resolves to null — check the connection's search_path");
    }

    #[test]
    fn only_plain_schema_names_are_quoted() {
        assert_eq!(quoted_schema("tenant_1$").unwrap(), "\"tenant_1$\"");
        for bad in ["", "1st", "a\"; drop table x; --", "a b", "ünï"] {
            let Err(Error::Invalid(message)) = quoted_schema(bad) else {
                panic!("{bad:?} must be refused");
            };
            assert!(
                message.starts_with("schema must be a plain identifier"),
                "{message}"
            );
        }
    }

    #[test]
    fn causes_are_part_of_the_message() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("error connecting to server")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let refused =
            std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "Connection refused");
        assert_eq!(
            with_sources(&Outer(refused)),
            "error connecting to server: Connection refused"
        );
    }
}
