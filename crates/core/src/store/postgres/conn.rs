//! Postgres connections the protocol's way (docs/protocol.md, "Migration
//! ledger", "Connection setup (Postgres)"): the DSN and what may be shown of
//! it, error mapping, migrations, and reading rows.

use std::fmt::Display;
use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::PoolError;
use tokio_postgres::config::Host;
use tokio_postgres::error::SqlState;
use tokio_postgres::Config;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::transport::{end_tx, params, Param, PgRow, Session, Transport};

use crate::error::{Error, Result};
use crate::protocol::{self, POSTGRES, POSTGRES_INSTALLATIONS, POSTGRES_MIGRATIONS};
use crate::task::{Status, Task, COLUMNS};

/// libpq waits forever by default; a store should report an unreachable host.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A parsed connection string and a password-free description of its target.
#[derive(Clone)]
pub struct Dsn {
    pub config: Config,
    pub tls: MakeRustlsConnect,
    target: String,
}

impl Dsn {
    /// Accepts both libpq forms (`postgres://…` URLs and `key=value` lists). The
    /// raw string is never echoed: it may hold the password.
    pub fn parse(dsn: &str) -> Result<Dsn> {
        let (dsn, verify) = super::tls::split_verification(dsn);
        let mut config = Config::from_str(&dsn)
            .map_err(|e| Error::Connection(format!("invalid Postgres connection string: {e}")))?;
        fill_from_env(&mut config, |name| std::env::var(name).ok())?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        let target = describe(&config);
        Ok(Dsn {
            config,
            tls: super::tls::connector(verify),
            target,
        })
    }

    /// `postgres://user@host:port/dbname`, without the password.
    pub fn target(&self) -> &str {
        &self.target
    }

    pub fn connection_error(&self, cause: impl Display) -> Error {
        Error::Connection(format!(
            "cannot connect to Postgres at {}: {cause}",
            self.target
        ))
    }

    /// A failure to obtain a pooled connection.
    pub fn pool_error(&self, e: PoolError) -> Error {
        match e {
            PoolError::Backend(e) => self.connection_error(driver_cause(&e)),
            PoolError::Closed => Error::Connection("the store was closed".into()),
            other => self.connection_error(other),
        }
    }
}

/// What the DSN leaves out comes from the libpq environment variables, as
/// node-postgres (the reference's driver) does; the host defaults to localhost.
fn fill_from_env(config: &mut Config, env: impl Fn(&str) -> Option<String>) -> Result<()> {
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        let hosts = env("PGHOST").unwrap_or_else(|| "localhost".into());
        for host in hosts.split(',') {
            config.host(host.trim());
        }
    }
    if config.get_ports().is_empty() {
        if let Some(port) = env("PGPORT") {
            let port = port
                .trim()
                .parse()
                .map_err(|_| Error::Connection(format!("PGPORT is not a port number: {port}")))?;
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        if let Some(user) = env("PGUSER") {
            config.user(user);
        }
    }
    if config.get_password().is_none() {
        if let Some(password) = env("PGPASSWORD") {
            config.password(password);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(dbname) = env("PGDATABASE") {
            config.dbname(dbname);
        }
    }
    Ok(())
}

/// `postgres://user@host:port/dbname`, without the password.
fn describe(config: &Config) -> String {
    let names: Vec<String> = if config.get_hosts().is_empty() {
        config
            .get_hostaddrs()
            .iter()
            .map(|a| a.to_string())
            .collect()
    } else {
        config
            .get_hosts()
            .iter()
            .map(|host| match host {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            })
            .collect()
    };
    let hosts: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let port = config
                .get_ports()
                .get(i)
                .or_else(|| config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            format!("{name}:{port}")
        })
        .collect();
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let dbname = config.get_dbname().unwrap_or("");
    format!("postgres://{user}{}/{dbname}", hosts.join(","))
}

/// The server's own words when it refused us, else the driver's.
fn driver_cause(e: &tokio_postgres::Error) -> String {
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

/// Run one statement and hand back its rows.
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
    session
        .query(sql, params)
        .await?
        .iter()
        .map(task_from_row)
        .collect()
}

pub async fn task<S: Session + ?Sized>(
    session: &S,
    sql: &str,
    params: &[Param<'_>],
) -> Result<Option<Task>> {
    Ok(tasks(session, sql, params).await?.into_iter().next())
}

fn json<R: PgRow>(row: &R, index: usize) -> Result<String> {
    row.opt_json(index)?.ok_or_else(|| Error::Database {
        code: SqlState::NOT_NULL_VIOLATION.code().to_string(),
        message: format!("column {index} is null"),
    })
}

/// A full task row, columns in table order (checked at connect).
pub fn task_from_row<R: PgRow>(row: &R) -> Result<Task> {
    let status = row.text(3)?;
    Ok(Task {
        id: row.text(0)?,
        name: row.text(1)?,
        queue: row.text(2)?,
        status: status.parse::<Status>().map_err(|_| Error::Database {
            code: SqlState::DATA_EXCEPTION.code().to_string(),
            message: format!("unknown task status {status}"),
        })?,
        payload: json(row, 4)?,
        result: row.opt_json(5)?,
        error: row.opt_json(6)?,
        metadata: json(row, 7)?,
        progress: row.opt_float(8)?,
        message: row.opt_text(9)?,
        attempt: row.int(10)?,
        max_attempts: row.int(11)?,
        priority: row.int(12)?,
        worker_id: row.opt_text(13)?,
        lease_until_ms: row.opt_int(14)?,
        run_at_ms: row.int(15)?,
        cancel_requested_at_ms: row.opt_int(16)?,
        parent_id: row.opt_text(17)?,
        root_id: row.opt_text(18)?,
        correlation_id: row.opt_text(19)?,
        created_at_ms: row.int(20)?,
        updated_at_ms: row.int(21)?,
        completed_at_ms: row.opt_int(22)?,
    })
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

/// Refuse a database stamped with another protocol major. Before migrating a
/// missing stamp is fine (a new database); after, it reads as 0.
pub async fn check_protocol_version<S: Session + ?Sized>(
    session: &S,
    missing_is_error: bool,
) -> Result<()> {
    let has_meta = flag(session, "select to_regclass('cairnq_meta') is not null").await?;
    let found = if has_meta {
        read_protocol_version(session).await?
    } else {
        None
    };
    protocol::check_version(found, missing_is_error)
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
        Ok(())
    } else {
        Err(Error::not_cairnq(format!(
            "the Postgres database at {target} is not a cairnq database: it has no cairnq_meta, cairnq_migrations and cairnq_tasks tables (nothing was changed)"
        )))
    }
}

/// The split check at connect, before anything is created (docs/protocol.md,
/// "Connection setup (Postgres)"): where the connection resolves against
/// where cairnq is installed.
pub async fn check_schema<S: Session + ?Sized>(session: &S, schema: Option<&str>) -> Result<()> {
    let found = session.query(POSTGRES_INSTALLATIONS, &[]).await?;
    let current = match found.first() {
        Some(row) => row.opt_text(0)?,
        None => None,
    };
    let installed = found
        .iter()
        .filter_map(|row| row.opt_text(1).transpose())
        .collect::<Result<Vec<String>>>()?;
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
        end_tx(tx, applied).await?;
    }
    check_columns(&transport.conn(opened).await?).await
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

/// Rows are read by position, so the table must have the protocol's columns in
/// the protocol's order.
async fn check_columns<S: Session>(session: &S) -> Result<()> {
    let names: Vec<String> = session
        .query(
            "select attname::text from pg_attribute \
             where attrelid = 'cairnq_tasks'::regclass and attnum > 0 and not attisdropped \
             order by attnum",
            &[],
        )
        .await?
        .iter()
        .map(|row| row.text(0))
        .collect::<Result<_>>()?;
    if names.len() < COLUMNS.len() || names.iter().zip(COLUMNS).any(|(a, b)| a != b) {
        return Err(Error::Connection(format!(
            "cairnq_tasks does not have the protocol's columns (found {})",
            names.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
    fn descriptions_never_hold_the_password() {
        for dsn in [
            "postgres://alice:s3cret@db.example:6543/app",
            "host=db.example port=6543 user=alice password='s3cret' dbname=app",
        ] {
            let parsed = Dsn::parse(dsn).unwrap();
            assert_eq!(parsed.target, "postgres://alice@db.example:6543/app");
            let message = parsed.connection_error("refused").to_string();
            assert!(!message.contains("s3cret"), "{message}");
        }
    }

    #[test]
    fn the_environment_fills_what_the_dsn_leaves_out() {
        let env = |name: &str| match name {
            "PGHOST" => Some("db1,db2".to_string()),
            "PGPORT" => Some("6000".to_string()),
            "PGUSER" => Some("envuser".to_string()),
            "PGPASSWORD" => Some("envpass".to_string()),
            "PGDATABASE" => Some("envdb".to_string()),
            _ => None,
        };
        let mut config = Config::from_str("postgres:///app").unwrap();
        fill_from_env(&mut config, env).unwrap();
        assert_eq!(
            describe(&config),
            "postgres://envuser@db1:6000,db2:6000/app"
        );
        assert_eq!(config.get_password(), Some(&b"envpass"[..]));

        let mut explicit = Config::from_str("postgres://me:pw@here:7000/mine").unwrap();
        fill_from_env(&mut explicit, env).unwrap();
        assert_eq!(describe(&explicit), "postgres://me@here:7000/mine");
        assert_eq!(explicit.get_password(), Some(&b"pw"[..]));

        let mut bare = Config::from_str("postgres://").unwrap();
        fill_from_env(&mut bare, |_| None).unwrap();
        assert_eq!(describe(&bare), "postgres://localhost:5432/");
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

    #[test]
    fn bad_connection_strings_are_not_echoed() {
        let Err(err) = Dsn::parse("postgres://alice:s3cret@db.example:notaport/app") else {
            panic!("a bad port must be refused");
        };
        assert!(matches!(err, Error::Connection(_)));
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }
}
